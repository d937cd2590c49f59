// Prints the SQL that would bring the database at DATABASE_URL in line with the entities.
// Used to write migrations (npm run build first); the entity/migration drift test runs the same check.
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// DIST_DIR lets a build in another directory (tsc --outDir) be compared without touching dist/.
const dist = pathToFileURL(
  path.resolve(process.env.DIST_DIR ?? new URL('../dist', import.meta.url).pathname),
);
const { AppModule } = await import(`${dist.href}/src/app.module.js`);
const { AppConfig } = await import(`${dist.href}/src/core/config/app-config.js`);

const config = new AppConfig('cli', {
  ...process.env,
  MIGRATIONS_RUN: process.env.MIGRATIONS_RUN ?? 'false',
});
const app = await NestFactory.createApplicationContext(AppModule.forRoot(config), { logger: ['error'] });
const sql = await app.get(DataSource).driver.createSchemaBuilder().log();
for (const q of sql.upQueries) console.log(`${q.query};`);
await app.close();
