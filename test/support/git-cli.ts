import { runCommand, type CommandResult } from '../../src/core/process/command-runner.js';

/**
 * Git for a test's own checks and set-up (`git --git-dir=<repo> rev-parse ...`, a remote and its
 * work tree), started by the application's command runner as the application's one-shot git
 * commands are: a spawn straight from a test process, which holds the whole application, costs
 * 10 to 20 ms of CPU (docs/architecture.md, "How git runs"); one through the runner about 2 ms.
 * The command runs with the test's environment, as `execFileSync('git', ...)` would.
 */
async function run(
  args: string[],
  options: { input?: string; env?: Record<string, string> },
): Promise<CommandResult> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value;
  return runCommand({
    file: 'git',
    args,
    env: { ...env, ...options.env },
    input: options.input === undefined ? undefined : Buffer.from(options.input),
    timeoutMs: 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** Runs git and answers its standard output, trimmed; throws with git's words when it fails. */
export async function gitCli(
  args: string[],
  options: { input?: string; env?: Record<string, string> } = {},
): Promise<string> {
  const result = await run(args, options);
  if (result.code !== 0) {
    const why = result.code ?? result.errorCode ?? result.signal;
    throw new Error(`git ${args.join(' ')} failed (${why}): ${result.stderr.toString('utf8').trim()}`);
  }
  return result.stdout.toString('utf8').trim();
}

/** Whether git exits 0 (`cat-file -e <oid>`: the object exists). */
export async function gitSucceeds(args: string[]): Promise<boolean> {
  return (await run(args, {})).code === 0;
}
