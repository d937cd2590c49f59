import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

// The build under test: dist/ (`npm test` builds it), or TEST_DIST_DIR's.
const CLI = path.resolve(process.env.TEST_DIST_DIR ?? 'dist', 'src/cli.js');
const VERSION = (JSON.parse(fs.readFileSync('package.json', 'utf8')) as { version: string }).version;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the command line without any database: none of these invocations may need one. */
async function cli(...args: string[]): Promise<Result> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const COMMANDS = ['bootstrap', 'token', 'migrate', 'openapi'];

describe('admin command line: help and version', () => {
  it.each([['--help'], ['-h'], ['help']])('%s prints the usage on stdout and exits 0', async (flag) => {
    const res = await cli(flag);
    expect(res).toEqual({ code: 0, stdout: expect.stringContaining('Usage:'), stderr: '' });
    for (const command of COMMANDS) expect(res.stdout).toContain(command);
    expect(res.stdout).toContain('--version');
  });

  it.each(COMMANDS)('%s --help prints that command’s usage and exits 0, running nothing', async (command) => {
    for (const args of [
      [command, '--help'],
      [command, '-h'],
      ['help', command],
    ]) {
      const res = await cli(...args);
      expect(res.code).toBe(0);
      expect(res.stderr).toBe('');
      expect(res.stdout).toContain(`cli.js ${command}`);
      // Only this command's usage, not the list of commands.
      expect(res.stdout).not.toContain('Commands:');
    }
  });

  it('shows a command’s help even beside a mistake in its options', async () => {
    const res = await cli('bootstrap', '--account', 'x', '--nope', '--help');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('--email <email>');
  });

  it.each([['--version'], ['-v']])('%s prints the package version and exits 0', async (flag) => {
    expect(await cli(flag)).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
  });

  it('answers an unknown command with the usage on stderr and exit code 2', async () => {
    const res = await cli('frobnicate');
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain('unknown command: frobnicate');
    expect(res.stderr).toContain('Usage:');
    expect(await cli('help', 'frobnicate')).toMatchObject({ code: 2, stdout: '' });
  });

  it('answers no command, an unknown option or a stray argument with exit code 2', async () => {
    expect(await cli()).toMatchObject({ code: 2, stdout: '', stderr: expect.stringContaining('Usage:') });
    const unknown = await cli('migrate', '--email', 'a@b.test');
    expect(unknown).toMatchObject({ code: 2, stdout: '' });
    expect(unknown.stderr).toContain("Unknown option '--email'");
    expect(unknown.stderr).toContain('cli.js migrate');
    const stray = await cli('token', 'extra', '--account', 'acme', '--email', 'a@b.test');
    expect(stray).toMatchObject({ code: 2, stderr: expect.stringContaining('unexpected argument: extra') });
    const missing = await cli('token', '--account', 'acme');
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringContaining('--email is required') });
    expect(missing.stderr).toContain('cli.js token');
  });
});
