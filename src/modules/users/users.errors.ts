import { HttpStatus } from '@nestjs/common';
import { defineErrors } from '../../core/http/api-error.js';

export const usersError = defineErrors({
  user_not_found: HttpStatus.NOT_FOUND,
  email_taken: HttpStatus.CONFLICT,
  username_taken: HttpStatus.CONFLICT,
  cannot_act_on_self: HttpStatus.BAD_REQUEST,
  cannot_deactivate_self: HttpStatus.FORBIDDEN,
  last_admin: HttpStatus.FORBIDDEN,
  unknown_deployment: HttpStatus.BAD_REQUEST,
  unknown_role: HttpStatus.BAD_REQUEST,
  role_not_found: HttpStatus.NOT_FOUND,
  role_name_taken: HttpStatus.CONFLICT,
  unknown_resource: HttpStatus.BAD_REQUEST,
  unsupported_resource_type: HttpStatus.BAD_REQUEST,
  api_key_not_found: HttpStatus.NOT_FOUND,
  account_not_found: HttpStatus.NOT_FOUND,
  group_not_found: HttpStatus.NOT_FOUND,
  group_name_taken: HttpStatus.CONFLICT,
  unknown_groups: HttpStatus.BAD_REQUEST,
});
