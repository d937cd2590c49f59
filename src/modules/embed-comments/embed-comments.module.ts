import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EmbeddingModule } from '../embedding/embedding.module.js';
import { EmbedCommentsController } from './embed-comments.controller.js';
import { EmbedCommentsRepository } from './embed-comments.repository.js';
import { EmbedCommentsService } from './embed-comments.service.js';
import { EmbedCommentWriteWindow } from './entities/embed-comment-write-window.entity.js';
import { EmbedDashboardComment } from './entities/embed-dashboard-comment.entity.js';

/**
 * Comments on embedded dashboards (`/embed/dashboard/{publicId}/comments...`): threads inside
 * one embed tenant's partition of a dashboard, written by its embed users. The dashboard is
 * authorised through the embedding module's `EmbedAccessService.embedDashboard` (the same code as
 * its GET); whom a comment may mention comes from the embedding module's fragment over its
 * users and shares.
 */
@Module({
  imports: [EmbeddingModule, TypeOrmModule.forFeature([EmbedDashboardComment, EmbedCommentWriteWindow])],
  controllers: [EmbedCommentsController],
  providers: [EmbedCommentsRepository, EmbedCommentsService],
})
export class EmbedCommentsModule {}
