import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PrincipalSource } from '../../core/auth/principal-source.js';
import { DeploymentsModule } from '../deployments/deployments.module.js';
import { SettingsModule } from '../settings/settings.module.js';
import { AccountsService } from './accounts.service.js';
import { ApiKeysController } from './api-keys.controller.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { ApiKeysService } from './api-keys.service.js';
import { DirectoryRepository } from './directory.repository.js';
import { DirectoryService } from './directory.service.js';
import { EmbedThemeController } from './embed-theme.controller.js';
import { EmbedThemeService } from './embed-theme.service.js';
import { ApiKey } from './entities/api-key.entity.js';
import { GroupMember } from './entities/group-member.entity.js';
import { GroupRole } from './entities/group-role.entity.js';
import { Group } from './entities/group.entity.js';
import { Role } from './entities/role.entity.js';
import { UserRole } from './entities/user-role.entity.js';
import { User } from './entities/user.entity.js';
import { GroupsController } from './groups.controller.js';
import { GroupsRepository } from './groups.repository.js';
import { GroupsService } from './groups.service.js';
import { PoliciesService } from './policies.service.js';
import { ResourcePoliciesController } from './resource-policies.controller.js';
import { ResourcePoliciesService } from './resource-policies.service.js';
import { RolesController } from './roles.controller.js';
import { RolesRepository } from './roles.repository.js';
import { RolesService } from './roles.service.js';
import { UserGroupsController } from './user-groups.controller.js';
import { UsersController } from './users.controller.js';
import { UsersRepository } from './users.repository.js';
import { UsersService } from './users.service.js';

/**
 * Binds core/auth's {@link PrincipalSource} (the token lookup of every request) to this module's
 * tables. Global, so the core guard finds it without core importing a module.
 */
@Global()
@Module({
  providers: [ApiKeysRepository, { provide: PrincipalSource, useExisting: ApiKeysRepository }],
  exports: [ApiKeysRepository, PrincipalSource],
})
class PrincipalSourceModule {}

/** Console users, groups, roles and their policies, and API keys. */
@Module({
  imports: [
    TypeOrmModule.forFeature([User, Role, UserRole, ApiKey, Group, GroupMember, GroupRole]),
    PrincipalSourceModule,
    DeploymentsModule,
    SettingsModule,
  ],
  // EmbedThemeController first: its `users/embed-theme` must be matched before `users/:id`.
  controllers: [
    EmbedThemeController,
    UsersController,
    RolesController,
    ApiKeysController,
    GroupsController,
    UserGroupsController,
    ResourcePoliciesController,
  ],
  providers: [
    UsersRepository,
    GroupsRepository,
    RolesRepository,
    DirectoryRepository,
    UsersService,
    RolesService,
    PoliciesService,
    ApiKeysService,
    AccountsService,
    GroupsService,
    DirectoryService,
    ResourcePoliciesService,
    EmbedThemeService,
  ],
  exports: [AccountsService, GroupsService, UsersService, DirectoryService],
})
export class UsersModule {}
