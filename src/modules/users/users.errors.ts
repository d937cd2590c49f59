import { errorsOf } from '../../core/errors/api-error.js';

export const usersError = errorsOf(
  'user_not_found',
  'email_taken',
  'username_taken',
  'cannot_act_on_self',
  'cannot_deactivate_self',
  'last_admin',
  'unknown_deployment',
  'role_not_found',
  'role_name_taken',
  'role_name_reserved',
  'unknown_resource',
  'unsupported_resource_type',
  'api_key_not_found',
  'account_not_found',
  'group_not_found',
  'group_name_taken',
  'unknown_groups',
);
