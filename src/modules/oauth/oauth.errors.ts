import { errorsOf } from '../../core/errors/api-error.js';

/** The rules an OIDC token config's fields must satisfy, on create and update alike. */
export const OIDC_CONFIG_RULE_ERRORS = [
  'name_required',
  'custom_audience_required',
  'custom_audience_not_allowed',
  'invalid_custom_audience',
  'target_env_var_not_allowed',
  'invalid_custom_claims',
] as const;

export const integrationsError = errorsOf(
  'oauth_integration_not_found',
  'oauth_integration_name_taken',
  'config_too_large',
  'oauth_token_not_found',
  'invalid_oauth_state',
  'oauth_authorization_denied',
  'oauth_token_exchange_failed',
  'oidc_token_config_not_found',
  'oidc_token_config_name_taken',
  'oidc_audience_type_taken',
  ...OIDC_CONFIG_RULE_ERRORS,
);
