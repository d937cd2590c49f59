// Prints the SQL that would bring the database at DATABASE_URL in line with the entities.
// Used to write migrations (npm run build first); the entity/migration drift test runs the same check.
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { AppModule } from '../dist/src/app.module.js';
import { AppConfig } from '../dist/src/core/config/app-config.js';

const config = new AppConfig('cli', {
  ...process.env,
  MIGRATIONS_RUN: process.env.MIGRATIONS_RUN ?? 'false',
});
const app = await NestFactory.createApplicationContext(AppModule.forRoot(config), { logger: ['error'] });
const sql = await app.get(DataSource).driver.createSchemaBuilder().log();
for (const q of sql.upQueries) console.log(`${q.query};`);
await app.close();
