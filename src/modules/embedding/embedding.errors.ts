import { HttpStatus } from '@nestjs/common';
import { defineErrors } from '../../core/http/api-error.js';

export const embeddingError = defineErrors({
  invalid_embed_tenant_name: HttpStatus.BAD_REQUEST,
  invalid_external_id: HttpStatus.BAD_REQUEST,
  embed_tenant_not_found: HttpStatus.NOT_FOUND,
  embed_user_not_found: HttpStatus.NOT_FOUND,
  embed_group_not_found: HttpStatus.NOT_FOUND,
  embed_group_name_taken: HttpStatus.BAD_REQUEST,
  embed_group_name_reserved: HttpStatus.BAD_REQUEST,
  embed_group_has_members: HttpStatus.BAD_REQUEST,
  embed_group_immutable_name: HttpStatus.BAD_REQUEST,
  unknown_tenant_groups: HttpStatus.BAD_REQUEST,
  invalid_member: HttpStatus.BAD_REQUEST,
  embed_user_limit_reached: HttpStatus.TOO_MANY_REQUESTS,
  tenant_groups_need_creator_mode: HttpStatus.BAD_REQUEST,
  ephemeral_ttl_removed: HttpStatus.BAD_REQUEST,
  deployment_not_found: HttpStatus.NOT_FOUND,
  invalid_embed_session: HttpStatus.UNAUTHORIZED,
  dashboard_not_found: HttpStatus.NOT_FOUND,
  embedding_not_allowed: HttpStatus.FORBIDDEN,
  no_embed_access_change: HttpStatus.BAD_REQUEST,
  ambiguous_embed_access_target: HttpStatus.BAD_REQUEST,
  no_published_dashboard: HttpStatus.BAD_REQUEST,
});
