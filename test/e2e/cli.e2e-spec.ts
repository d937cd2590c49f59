import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { bearer, startApp, type TestApp } from '../support/app.js';
import { deploymentInput } from '../support/factories.js';

// The build under test: dist/ (`npm test` builds it), or TEST_DIST_DIR's.
const CLI = path.resolve(process.env.TEST_DIST_DIR ?? 'dist', 'src/cli.js');
const VERSION = (JSON.parse(fs.readFileSync('package.json', 'utf8')) as { version: string }).version;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the command line without any database: none of these invocations may need one. */
function cli(...args: string[]): Promise<Result> {
  return cliOn('postgres://nobody@127.0.0.1:1/none', ...args);
}

/** Runs the command line against the database at `databaseUrl`. */
async function cliOn(databaseUrl: string, ...args: string[]): Promise<Result> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const COMMANDS = ['bootstrap', 'token', 'add-release', 'migrate', 'openapi'];

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

describe('admin command line: add-release', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  const deployment = async () => {
    const res = await t
      .http()
      .post('/build/api/v1/deployments')
      .set(bearer(t.admin.token))
      .send(deploymentInput({ creationStep: 'project' }));
    expect(res.status).toBe(200);
    return res.body.id as number;
  };
  const versions = async (id: number) =>
    (await t.http().get(`/api/v1/deployments/${id}/versions`).set(bearer(t.admin.token))).body
      .items as Array<{
      releaseChannel: string;
      releaseChannelVersion: string;
      isCurrent: boolean;
      isLatestInChannel: boolean;
    }>;

  it.each([
    ['no --channel', ['--version', '1.7.0'], '--channel is required'],
    ['no --version', ['--channel', 'latest'], '--version is required'],
    ['a --version without its value', ['--channel', 'latest', '--version'], 'argument missing'],
    [
      'an unknown channel',
      ['--channel', 'nightly', '--version', '1.7.0'],
      '--channel must be one of: latest, release',
    ],
    [
      'a version of two parts',
      ['--channel', 'latest', '--version', '1.7'],
      '--version must be MAJOR.MINOR.PATCH',
    ],
    ['a leading zero', ['--channel', 'latest', '--version', '1.07.0'], '--version must be MAJOR.MINOR.PATCH'],
    [
      'a pre-release',
      ['--channel', 'latest', '--version', '1.7.0-beta.1'],
      '--version must be MAJOR.MINOR.PATCH',
    ],
    [
      'a part too large',
      ['--channel', 'latest', '--version', '1.7.9999999999'],
      '--version must be MAJOR.MINOR.PATCH',
    ],
    [
      'an unknown option',
      ['--channel', 'latest', '--version', '1.7.0', '--force'],
      "Unknown option '--force'",
    ],
  ])('refuses %s with its usage and exit code 2, touching no database', async (_, args, message) => {
    const res = await cli('add-release', ...args);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain(message);
    expect(res.stderr).toContain('cli.js add-release');
  });

  it('adds a release; a new head moves the followers of the channel; running it again changes nothing', async () => {
    const follower = await deployment();
    const holder = await deployment();
    const held = await t
      .http()
      .put(`/api/v1/deployments/${holder}`)
      .set(bearer(t.admin.token))
      .send({ releaseChannelVersionHold: true });
    expect(held.body).toMatchObject({ releaseChannelVersion: '1.6.2', releaseChannelVersionHold: true });

    const first = await cliOn(t.databaseUrl, 'add-release', '--channel', 'latest', '--version', 'v1.7.0');
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(JSON.parse(first.stdout)).toEqual({
      channel: 'latest',
      version: '1.7.0',
      added: true,
      head: '1.7.0',
      deploymentsMoved: 1,
      message:
        'Added 1.7.0 to the latest channel as its head; 1 deployment(s) following the channel now run it',
    });
    expect(await versions(follower)).toEqual([
      expect.objectContaining({ releaseChannelVersion: '1.7.0', isCurrent: true, isLatestInChannel: true }),
      expect.objectContaining({ releaseChannelVersion: '1.6.2', isCurrent: false, isLatestInChannel: false }),
      expect.objectContaining({ releaseChannel: 'release', releaseChannelVersion: '1.5.9' }),
    ]);
    expect((await versions(holder)).filter((v) => v.isCurrent)).toEqual([
      expect.objectContaining({ releaseChannelVersion: '1.6.2' }),
    ]);

    const rows = () =>
      t.sql(`SELECT (SELECT count(*)::int FROM release_catalogue) AS releases,
                    (SELECT count(*)::int FROM deployment_versions) AS history`);
    const before = await rows();
    const again = await cliOn(t.databaseUrl, 'add-release', '--channel', 'latest', '--version', '1.7.0');
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({
      channel: 'latest',
      version: '1.7.0',
      added: false,
      head: '1.7.0',
      deploymentsMoved: 0,
      message: '1.7.0 is already on the latest channel; nothing changed',
    });
    expect(await rows()).toEqual(before);

    const older = await cliOn(t.databaseUrl, 'add-release', '--channel', 'release', '--version', '1.5.6');
    expect(JSON.parse(older.stdout)).toMatchObject({ added: true, head: '1.5.9', deploymentsMoved: 0 });
  });
});
