// The e2e-slow project's budget per test and hook (jest.config.mjs): these files spawn processes
// and inject faults, and each bounds its own waits; a busy machine only slows them down.
jest.setTimeout(180_000);
