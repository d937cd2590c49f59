import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsService } from './accounts.service.js';
import { ApiKeysController } from './api-keys.controller.js';
import { ApiKeysService } from './api-keys.service.js';
import { Account } from './entities/account.entity.js';
import { ApiKey } from './entities/api-key.entity.js';
import { DirectoryService } from './directory.service.js';
import { GroupMember } from './entities/group-member.entity.js';
import { GroupRole } from './entities/group-role.entity.js';
import { Group } from './entities/group.entity.js';
import { Policy } from './entities/policy.entity.js';
import { Role } from './entities/role.entity.js';
import { UserRole } from './entities/user-role.entity.js';
import { User } from './entities/user.entity.js';
import { GroupsController } from './groups.controller.js';
import { GroupsService } from './groups.service.js';
import { PoliciesService } from './policies.service.js';
import { RolesController } from './roles.controller.js';
import { RolesService } from './roles.service.js';
import { UsersController } from './users.controller.js';
import { UsersService } from './users.service.js';

/** Accounts, console users, groups, roles, object-level grants and API keys. */
@Module({
  imports: [
    TypeOrmModule.forFeature([Account, User, Role, UserRole, Policy, ApiKey, Group, GroupMember, GroupRole]),
  ],
  controllers: [UsersController, RolesController, ApiKeysController, GroupsController],
  providers: [
    UsersService,
    RolesService,
    PoliciesService,
    ApiKeysService,
    AccountsService,
    GroupsService,
    DirectoryService,
  ],
  exports: [AccountsService, GroupsService, UsersService, DirectoryService],
})
export class UsersModule {}
