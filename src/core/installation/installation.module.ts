import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { InstallationRecord } from './installation.entity.js';
import { Installation } from './installation.js';

/**
 * The installation's identity (`installation`, one row): state outside PostgreSQL is marked with
 * it, so two installations never take each other's for their own.
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([InstallationRecord])],
  providers: [Installation],
  exports: [Installation],
})
export class InstallationModule {}
