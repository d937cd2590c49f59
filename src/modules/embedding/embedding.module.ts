import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EmbedTokenStore } from '../../core/auth/embed-token-store.js';
import { EmbeddingTokenStore } from './embedding-token-store.js';
import { DeploymentsModule } from '../deployments/deployments.module.js';
import { UsersModule } from '../users/users.module.js';
import { WorkspaceModule } from '../workspace/workspace.module.js';
import { EmbedAccessController } from './embed-access.controller.js';
import { EmbedAccessRepository } from './embed-access.repository.js';
import { EmbedAccessService } from './embed-access.service.js';
import { EmbedCatalogueController } from './embed-catalogue.controller.js';
import { EmbedCatalogueRepository } from './embed-catalogue.repository.js';
import { EmbedCatalogueService } from './embed-catalogue.service.js';
import { EmbedGroupsRepository } from './embed-groups.repository.js';
import { EmbedGroupsService } from './embed-groups.service.js';
import { EmbedSessionsRepository } from './embed-sessions.repository.js';
import { EmbedSessionsService } from './embed-sessions.service.js';
import { EmbedTenantsController } from './embed-tenants.controller.js';
import { EmbedTenantsRepository } from './embed-tenants.repository.js';
import { EmbedTenantsService } from './embed-tenants.service.js';
import { EmbedUsersRepository } from './embed-users.repository.js';
import { EmbedUsersService } from './embed-users.service.js';
import { EmbedController } from './embed.controller.js';
import { SharedWorkspaceController } from './shared-workspace.controller.js';
import { EmbedGroupMember } from './entities/embed-group-member.entity.js';
import { EmbedGroup } from './entities/embed-group.entity.js';
import { EmbedSession } from './entities/embed-session.entity.js';
import { EmbedTenant } from './entities/embed-tenant.entity.js';
import { EmbedUserGroup } from './entities/embed-user-group.entity.js';
import { EmbedUser } from './entities/embed-user.entity.js';
import { WorkbookEmbedAccess } from './entities/workbook-embed-access.entity.js';

/**
 * Embedding: embed tenants, embed users (provisioned directly, through group membership or by
 * generate-session, always through `EmbedUsersService.apply`), tenant groups, embed sessions
 * and tokens, and which embed audiences may open a workbook's published dashboard.
 *
 * Global for one export: core/auth verifies embed tokens through {@link EmbedTokenStore},
 * which this module implements over its sessions (core never imports a module). It also exports
 * {@link EmbedAccessService}, so python runs authorise a dashboard exactly as its GET does, and
 * {@link EmbedTenantsService} and {@link EmbedUsersService}, so notifications provision embed-user
 * recipients through `EmbedUsersService.apply` like every other path.
 */
@Global()
@Module({
  imports: [
    DeploymentsModule,
    UsersModule,
    WorkspaceModule,
    TypeOrmModule.forFeature([
      EmbedTenant,
      EmbedUser,
      EmbedUserGroup,
      EmbedGroup,
      EmbedGroupMember,
      EmbedSession,
      WorkbookEmbedAccess,
    ]),
  ],
  controllers: [
    EmbedTenantsController,
    EmbedController,
    EmbedAccessController,
    EmbedCatalogueController,
    SharedWorkspaceController,
  ],
  providers: [
    EmbedTenantsRepository,
    EmbedUsersRepository,
    EmbedGroupsRepository,
    EmbedSessionsRepository,
    EmbedAccessRepository,
    EmbedCatalogueRepository,
    { provide: EmbedTokenStore, useClass: EmbeddingTokenStore },
    EmbedTenantsService,
    EmbedUsersService,
    EmbedGroupsService,
    EmbedSessionsService,
    EmbedAccessService,
    EmbedCatalogueService,
  ],
  exports: [EmbedTokenStore, EmbedAccessService, EmbedTenantsService, EmbedUsersService],
})
export class EmbeddingModule {}
