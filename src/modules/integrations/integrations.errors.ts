import { HttpStatus } from '@nestjs/common';
import { defineErrors } from '../../core/http/api-error.js';

export const integrationsError = defineErrors({
  oauth_integration_not_found: HttpStatus.NOT_FOUND,
  oauth_integration_name_taken: HttpStatus.CONFLICT,
  config_too_large: HttpStatus.BAD_REQUEST,
  oauth_token_not_found: HttpStatus.NOT_FOUND,
  invalid_oauth_state: HttpStatus.BAD_REQUEST,
  oauth_authorization_denied: HttpStatus.BAD_REQUEST,
  oauth_token_exchange_failed: HttpStatus.BAD_GATEWAY,
  oidc_token_config_not_found: HttpStatus.NOT_FOUND,
  oidc_token_config_name_taken: HttpStatus.CONFLICT,
  oidc_audience_type_taken: HttpStatus.CONFLICT,
  name_required: HttpStatus.BAD_REQUEST,
  custom_audience_required: HttpStatus.BAD_REQUEST,
  custom_audience_not_allowed: HttpStatus.BAD_REQUEST,
  invalid_custom_audience: HttpStatus.BAD_REQUEST,
  target_env_var_not_allowed: HttpStatus.BAD_REQUEST,
  invalid_custom_claims: HttpStatus.BAD_REQUEST,
});
