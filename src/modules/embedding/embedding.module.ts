import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EmbedGroupMember } from './entities/embed-group-member.entity.js';
import { EmbedGroup } from './entities/embed-group.entity.js';
import { EmbedSession } from './entities/embed-session.entity.js';
import { EmbedTenant } from './entities/embed-tenant.entity.js';
import { EmbedUserGroup } from './entities/embed-user-group.entity.js';
import { EmbedUser } from './entities/embed-user.entity.js';
import { WorkbookEmbedAccess } from './entities/workbook-embed-access.entity.js';

@Module({
  imports: [
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
})
export class EmbeddingModule {}
