/** A valid body for `POST /build/api/v1/deployments`; override any field. */
export function deploymentInput(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'Sales analytics',
    cloudProvider: 'aws',
    isManaged: true,
    region: 'aws-us-east-1',
    targetPlatform: 'cubecloud',
    creationStep: 'ready',
    ...overrides,
  };
}

/** Polls `probe` until `done` holds or the time is up; returns the last value for the assertion. */
export async function waitFor<T>(
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 10_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await probe();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, intervalMs));
    value = await probe();
  }
  return value;
}
