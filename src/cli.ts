import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { isEmail } from 'class-validator';
import { DataSource } from 'typeorm';
import { AppModule } from './app.module.js';
import { AppConfig } from './core/config/app-config.js';
import { migrate } from './core/database/migrator.js';
import { loadConfig } from './core/lifecycle.js';
import { buildOpenApiDocument } from './core/http/openapi.js';
import { AccountsService } from './modules/users/accounts.service.js';

const USAGE = `Usage: npm run cli -- <command> [options]
  bootstrap --account <slug> --email <email>   create the account and its admin if missing; print a fresh admin token
  token --account <slug> --email <email>       print a new token for an existing user
  migrate                                      apply pending migrations
  openapi [--write <file>] [--check <file>]    print, write or verify the OpenAPI document`;

const SLUG = /^[a-z0-9][a-z0-9-]{1,62}$/;

class UsageError extends Error {}

function required(values: Record<string, string | boolean | undefined>, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v.trim() === '') throw new UsageError(`--${name} is required`);
  return v.trim();
}

function identity(values: Record<string, string | boolean | undefined>): { account: string; email: string } {
  const account = required(values, 'account');
  const email = required(values, 'email');
  if (!SLUG.test(account))
    throw new UsageError('--account must be 2-63 of a-z, 0-9 and -, starting with a letter or digit');
  if (!isEmail(email)) throw new UsageError('--email must be a valid email address');
  return { account, email };
}

async function withContext<T>(
  config: AppConfig,
  work: (app: Awaited<ReturnType<typeof NestFactory.createApplicationContext>>) => Promise<T>,
): Promise<T> {
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
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      account: { type: 'string' },
      email: { type: 'string' },
      write: { type: 'string' },
      check: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, ...rest] = positionals;
  if (values.help || !command) throw new UsageError('');
  if (rest.length > 0) throw new UsageError(`unexpected argument: ${rest[0]}`);

  switch (command) {
    case 'bootstrap': {
      const { account, email } = identity(values);
      return withContext(loadConfig('cli'), async (app) =>
        JSON.stringify(await app.get(AccountsService).bootstrap(account, email)),
      );
    }
    case 'token': {
      const { account, email } = identity(values);
      return withContext(loadConfig('cli'), async (app) =>
        JSON.stringify(await app.get(AccountsService).token(account, email)),
      );
    }
    case 'migrate': {
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
      finish(process.stderr, `${err.message ? `error: ${err.message}\n` : ''}${USAGE}\n`, 2);
      return;
    }
    const message = err instanceof Error ? err.message : String(err);
    finish(process.stderr, `error: ${message}\n`, 1);
  });
