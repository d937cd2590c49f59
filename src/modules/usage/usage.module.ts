import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module.js';
import { UsageController } from './usage.controller.js';
import { UsageService } from './usage.service.js';

/** Short-lived tokens for querying the account's own usage and billing data. */
@Module({
  imports: [UsersModule],
  controllers: [UsageController],
  providers: [UsageService],
})
export class UsageModule {}
