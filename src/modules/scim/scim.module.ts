import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module.js';
import { ScimDiscoveryController } from './scim-discovery.controller.js';
import { ScimGroupsController } from './scim-groups.controller.js';
import { ScimGroupsService } from './scim-groups.service.js';
import { ScimUsersController } from './scim-users.controller.js';
import { ScimUsersService } from './scim-users.service.js';

/**
 * SCIM 2.0 (RFC 7643, RFC 7644) at /api/scim/v2: identity providers provision the account's
 * console users and groups. Users and groups are reached through the users module's services.
 * Errors under that path, whatever raises them, answer in the SCIM error schema (`ScimController`).
 */
@Module({
  imports: [UsersModule],
  controllers: [ScimUsersController, ScimGroupsController, ScimDiscoveryController],
  providers: [ScimUsersService, ScimGroupsService],
})
export class ScimModule {}
