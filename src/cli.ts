import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { INestApplicationContext } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AppConfig } from './core/config/app-config.js';

interface Command {
  /** The argument synopsis shown in the usage. */
  synopsis: string;
  summary: string;
  /** More lines for `<command> --help`. */
  details: string[];
  options: Record<string, { type: 'string' }>;
}

const IDENTITY = { account: { type: 'string' }, email: { type: 'string' } } as const;

const COMMANDS: Record<string, Command> = {
  bootstrap: {
    synopsis: '--account <slug> --email <email>',
    summary: 'create the account and its admin if missing; print a fresh admin token',
    details: [
      'Prints {"accountId","userId","token"}. Safe to repeat: an existing user of that email is made',
      'an active Admin, and a new token is issued each time. The slug is 2-63 of a-z, 0-9 and -.',
    ],
    options: IDENTITY,
  },
  token: {
    synopsis: '--account <slug> --email <email>',
    summary: 'print a new token for an existing user',
    details: ['Prints {"userId","token"}. The token is shown once; only its hash is stored.'],
    options: IDENTITY,
  },
  'add-release': {
    synopsis: '--channel <channel> --version <version>',
    summary: 'add a release to a channel of the release catalogue',
    details: [
      'The channel is latest or release.',
      'Prints {"channel","version","added","head","deploymentsMoved","message"}. The version is',
      'MAJOR.MINOR.PATCH, optionally with a v (stored without). When it becomes the head of the',
      'channel (the highest version), deployments following the channel run it from now on and',
      'their version history records it. Safe to repeat: a release the channel has already',
      'changes nothing and prints "added":false.',
    ],
    options: { channel: { type: 'string' }, version: { type: 'string' } },
  },
  migrate: {
    synopsis: '',
    summary: 'apply pending migrations',
    details: ['Prints {"applied":[...]} (empty when up to date). Takes an advisory lock on PostgreSQL.'],
    options: {},
  },
  openapi: {
    synopsis: '[--write <file>] [--check <file>]',
    summary: 'print, write or verify the OpenAPI document',
    details: [
      'Without options prints the document. --write <file> writes it; --check <file> exits 1 when',
      'the file differs. Needs neither database nor Redis.',
    ],
    options: { write: { type: 'string' }, check: { type: 'string' } },
  },
};

/** The column of the commands' summaries in the usage. */
const SYNOPSIS_WIDTH =
  Math.max(...Object.entries(COMMANDS).map(([name, c]) => `${name} ${c.synopsis}`.length)) + 2;

const USAGE = [
  'Usage: node dist/src/cli.js <command> [options]   (or: npm run cli -- <command> [options])',
  '',
  'Commands:',
  ...Object.entries(COMMANDS).map(
    ([name, c]) => `  ${`${name} ${c.synopsis}`.padEnd(SYNOPSIS_WIDTH)}${c.summary}`,
  ),
  '',
  'Options:',
  "  -h, --help       show this help, or a command's help after its name",
  '  -v, --version    print the version',
  '',
  'Each command prints one line of JSON on standard output and exits 0; errors go to standard',
  'error with exit 1, usage errors with exit 2. Configuration comes from the environment (see',
  'docs/configuration.md).',
].join('\n');

function commandUsage(name: string): string {
  const c = COMMANDS[name];
  return [
    `Usage: node dist/src/cli.js ${name} ${c.synopsis}`.trimEnd(),
    '',
    `${c.summary[0].toUpperCase()}${c.summary.slice(1)}.`,
    ...c.details,
  ].join('\n');
}

/** Text for standard output: help or the version (exit 0). */
class Help {
  constructor(readonly text: string) {}
}

const SLUG = /^[a-z0-9][a-z0-9-]{1,62}$/;

/** A mistake in the command line: printed with the usage on standard error, exit 2. */
class UsageError extends Error {
  constructor(
    message: string,
    readonly usage = USAGE,
  ) {
    super(message);
  }
}

/** The version in package.json, found upwards from this file (dist/src/cli.js, or another build directory). */
function packageVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('package.json not found');
    dir = parent;
  }
  return (JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

/** Every option of every command, to find the command and the help and version flags first. */
const ALL_OPTIONS = {
  ...Object.assign({}, ...Object.values(COMMANDS).map((c) => c.options)),
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

/**
 * Splits the arguments into the command and its options. Help and version come first, so
 * `--help` works even beside a mistake; then every command accepts only its own options.
 */
function parse(argv: string[]): Help | { command: string; values: Record<string, string | undefined> } {
  const loose = parseArgs({ args: argv, allowPositionals: true, strict: false, options: ALL_OPTIONS });
  const [command, topic] = loose.positionals;
  if (command === 'help') {
    if (topic === undefined) return new Help(USAGE);
    if (!(topic in COMMANDS)) throw new UsageError(`unknown command: ${topic}`);
    return new Help(commandUsage(topic));
  }
  if (command !== undefined && !(command in COMMANDS)) throw new UsageError(`unknown command: ${command}`);
  if (loose.values.help) return new Help(command ? commandUsage(command) : USAGE);
  // `--version` prints the version, unless the command takes a --version of its own (add-release).
  if (loose.values.version && !(command !== undefined && 'version' in COMMANDS[command].options))
    return new Help(packageVersion());
  if (command === undefined) throw new UsageError('a command is required');

  const usage = commandUsage(command);
  let parsed: { positionals: string[]; values: Record<string, string | boolean | undefined> };
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: COMMANDS[command].options });
  } catch (err) {
    // node:util reports unknown options and missing values with ERR_PARSE_ARGS_* codes.
    throw new UsageError(err instanceof Error ? err.message.split('. ')[0] : String(err), usage);
  }
  const extra = parsed.positionals.slice(1);
  if (extra.length > 0) throw new UsageError(`unexpected argument: ${extra[0]}`, usage);
  return { command, values: parsed.values as Record<string, string | undefined> };
}

function required(values: Record<string, string | boolean | undefined>, name: string, usage: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v.trim() === '') throw new UsageError(`--${name} is required`, usage);
  return v.trim();
}

async function identity(
  values: Record<string, string | boolean | undefined>,
  usage: string,
): Promise<{ account: string; email: string }> {
  const account = required(values, 'account', usage);
  const email = required(values, 'email', usage);
  if (!SLUG.test(account))
    throw new UsageError('--account must be 2-63 of a-z, 0-9 and -, starting with a letter or digit', usage);
  const { isEmail } = await import('class-validator');
  if (!isEmail(email)) throw new UsageError('--email must be a valid email address', usage);
  return { account, email };
}

/** The application is loaded only for a command that needs it, so help and version answer at once. */
async function application() {
  const [{ NestFactory }, { AppModule }] = await Promise.all([
    import('@nestjs/core'),
    import('./app.module.js'),
  ]);
  return { NestFactory, AppModule };
}

async function withContext<T>(
  config: AppConfig,
  work: (app: INestApplicationContext) => Promise<T>,
): Promise<T> {
  const { NestFactory, AppModule } = await application();
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(config), {
    logger: ['error'],
    abortOnError: false,
  });
  try {
    return await work(app);
  } finally {
    await app.close();
  }
}

async function openapi(
  config: AppConfig,
  values: Record<string, string | boolean | undefined>,
): Promise<string> {
  const { NestFactory, AppModule } = await application();
  const { buildOpenApiDocument } = await import('./core/openapi/openapi.js');
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    preview: true,
    logger: false,
    abortOnError: false,
  });
  const text = `${JSON.stringify(buildOpenApiDocument(app), null, 2)}\n`;
  await app.close();
  if (typeof values.write === 'string') {
    fs.mkdirSync(path.dirname(values.write), { recursive: true });
    fs.writeFileSync(values.write, text);
    return JSON.stringify({ written: values.write });
  }
  if (typeof values.check === 'string') {
    const current = fs.existsSync(values.check) ? fs.readFileSync(values.check, 'utf8') : '';
    if (current !== text) throw new Error(`${values.check} is stale; run: npm run openapi`);
    return JSON.stringify({ upToDate: values.check });
  }
  return text.trimEnd();
}

async function run(argv: string[]): Promise<string> {
  const parsed = parse(argv);
  if (parsed instanceof Help) return parsed.text;
  const { command, values } = parsed;

  const { AppConfig } = await import('./core/config/app-config.js');
  const { loadConfig } = await import('./core/lifecycle.js');
  switch (command) {
    case 'bootstrap': {
      const { account, email } = await identity(values, commandUsage(command));
      const { AccountsService } = await import('./modules/users/accounts.service.js');
      return withContext(loadConfig('cli'), async (app) =>
        JSON.stringify(await app.get(AccountsService).bootstrap(account, email)),
      );
    }
    case 'token': {
      const { account, email } = await identity(values, commandUsage(command));
      const { AccountsService } = await import('./modules/users/accounts.service.js');
      return withContext(loadConfig('cli'), async (app) =>
        JSON.stringify(await app.get(AccountsService).token(account, email)),
      );
    }
    case 'add-release': {
      const usage = commandUsage(command);
      const channel = required(values, 'channel', usage);
      const version = required(values, 'version', usage);
      const [{ RELEASE_CHANNELS }, { parseReleaseVersion }] = await Promise.all([
        import('./modules/deployments/deployment.constants.js'),
        import('./modules/deployments/release-version.js'),
      ]);
      const channels: readonly string[] = RELEASE_CHANNELS;
      if (!channels.includes(channel))
        throw new UsageError(`--channel must be one of: ${RELEASE_CHANNELS.join(', ')}`, usage);
      if (!parseReleaseVersion(version))
        throw new UsageError(
          '--version must be MAJOR.MINOR.PATCH, optionally with a v (1.7.0 or v1.7.0)',
          usage,
        );
      const { ReleasesService } = await import('./modules/deployments/releases.service.js');
      return withContext(loadConfig('cli'), async (app) => {
        const result = await app
          .get(ReleasesService)
          .addRelease(channel as (typeof RELEASE_CHANNELS)[number], version);
        const message = !result.added
          ? `${result.version} is already on the ${result.channel} channel; nothing changed`
          : result.head === result.version
            ? `Added ${result.version} to the ${result.channel} channel as its head; ` +
              `${result.deploymentsMoved} deployment(s) following the channel now run it`
            : `Added ${result.version} to the ${result.channel} channel; its head stays ${result.head}`;
        return JSON.stringify({ ...result, message });
      });
    }
    case 'migrate': {
      const [{ DataSource }, { migrate }] = await Promise.all([
        import('typeorm'),
        import('./core/database/migrator.js'),
      ]);
      const config = new AppConfig('cli', { ...process.env, MIGRATIONS_RUN: 'false' });
      return withContext(config, async (app) => {
        const applied = await migrate(app.get(DataSource), { lock: !config.embedded });
        return JSON.stringify({ applied: applied.map((m) => m.name) });
      });
    }
    case 'openapi':
      return openapi(new AppConfig('cli', {}), values);
    default:
      throw new UsageError(`unknown command: ${command}`);
  }
}

/**
 * Writes, then exits once the text is handed to the OS: a pipe takes 64 KiB at a time, and
 * exiting straight after `write` would cut a longer output (the OpenAPI document) short.
 */
function finish(stream: NodeJS.WriteStream, text: string, code: number): void {
  stream.write(text, () => process.exit(code));
}

run(process.argv.slice(2))
  .then((line) => finish(process.stdout, `${line}\n`, 0))
  .catch((err: unknown) => {
    if (err instanceof UsageError) {
      finish(process.stderr, `error: ${err.message}\n\n${err.usage}\n`, 2);
      return;
    }
    const message = err instanceof Error ? err.message : String(err);
    finish(process.stderr, `error: ${message}\n`, 1);
  });
