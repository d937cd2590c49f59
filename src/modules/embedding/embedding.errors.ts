import { errorsOf } from '../../core/errors/api-error.js';

export const embeddingError = errorsOf(
  'invalid_embed_tenant_name',
  'invalid_external_id',
  'embed_tenant_not_found',
  'embed_user_not_found',
  'embed_group_not_found',
  'embed_group_name_taken',
  'embed_group_name_reserved',
  'embed_group_has_members',
  'unknown_tenant_groups',
  'invalid_member',
  'embed_user_limit_reached',
  'tenant_groups_need_creator_mode',
  'invalid_embed_session',
  'embedding_not_allowed',
  'no_embed_access_change',
  'ambiguous_embed_access_target',
  'no_published_dashboard',
  'shared_workspace_unavailable',
);
