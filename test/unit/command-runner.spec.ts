import { commandRunnerPid, runCommand, type CommandSpec } from '../../src/core/process/command-runner.js';

const spec = (file: string, args: string[], extra: Partial<CommandSpec> = {}): CommandSpec => ({
  file,
  args,
  env: { PATH: '/usr/bin:/bin' },
  timeoutMs: 10_000,
  maxBuffer: 64 * 1024 * 1024,
  ...extra,
});

/** Commands started by the runner process (core/process/command-runner.ts), real processes all. */
describe('runCommand', () => {
  it('passes arguments, the environment and standard input, and answers output and exit code', async () => {
    const input = Buffer.from('line one\nline two\n');
    const result = await runCommand(
      spec('/bin/sh', ['-c', 'cat; printf "%s" "$GREETING" >&2; exit 3'], {
        env: { PATH: '/usr/bin:/bin', GREETING: 'hello' },
        input,
      }),
    );
    expect(result).toMatchObject({ code: 3, signal: null, errorCode: null });
    expect(result.stdout.equals(input)).toBe(true);
    expect(result.stderr.toString()).toBe('hello');
  });

  it('runs commands side by side and keeps each answer with its command', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => runCommand(spec('/bin/sh', ['-c', `printf ${i}`]))),
    );
    expect(results.map((r) => r.stdout.toString())).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
  });

  it('carries binary output of many megabytes whole', async () => {
    const result = await runCommand(
      spec('/bin/sh', ['-c', 'head -c 20000000 /dev/zero | tr "\\000" "\\377"']),
    );
    expect(result.code).toBe(0);
    expect(result.stdout.length).toBe(20_000_000);
    expect(result.stdout.every((b) => b === 0xff)).toBe(true);
  });

  it('reports a missing program, a timeout and too much output as execFile does', async () => {
    const missing = await runCommand(spec('/nonexistent/program', []));
    expect(missing).toMatchObject({ code: null, errorCode: 'ENOENT' });
    const slow = await runCommand(spec('/bin/sleep', ['30'], { timeoutMs: 200 }));
    expect(slow).toMatchObject({ code: null, signal: 'SIGKILL' });
    const large = await runCommand(spec('/bin/sh', ['-c', 'head -c 5000 /dev/zero'], { maxBuffer: 1000 }));
    expect(large.errorCode).toBe('ERR_CHILD_PROCESS_STDIO_MAXBUFFER');
  });

  it('runs a command directly when the runner dies under it, and starts a new runner after', async () => {
    await runCommand(spec('/bin/true', []));
    const first = commandRunnerPid();
    expect(first).toEqual(expect.any(Number));
    const waiting = runCommand(spec('/bin/sh', ['-c', 'sleep 1; printf done']));
    process.kill(first!, 'SIGKILL');
    const result = await waiting;
    expect(result).toMatchObject({ code: 0 });
    expect(result.stdout.toString()).toBe('done');
    await runCommand(spec('/bin/true', []));
    expect(commandRunnerPid()).toEqual(expect.any(Number));
    expect(commandRunnerPid()).not.toBe(first);
  });
});
