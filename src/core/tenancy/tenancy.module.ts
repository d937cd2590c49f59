import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Account } from './account.entity.js';
import { TenantAccounts } from './tenant-accounts.js';

/**
 * Accounts, the tenancy root every table points at. In core, so core (audit events, job runs)
 * and every module refer to it without importing a module.
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([Account])],
  providers: [TenantAccounts],
  exports: [TenantAccounts],
})
export class TenancyModule {}
