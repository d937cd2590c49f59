import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OAuthIntegration } from './entities/oauth-integration.entity.js';
import { OAuthState } from './entities/oauth-state.entity.js';
import { OidcTokenConfig } from './entities/oidc-token-config.entity.js';
import { UserOAuthToken } from './entities/user-oauth-token.entity.js';
import { OAuthFlowService } from './oauth-flow.service.js';
import { OAuthIntegrationsController } from './oauth-integrations.controller.js';
import { OAuthIntegrationsRepository } from './oauth-integrations.repository.js';
import { OAuthIntegrationsService } from './oauth-integrations.service.js';
import { FetchOAuthTokenClient, OAuthTokenClient } from './oauth-token-client.js';
import { OidcTokenConfigsController } from './oidc-token-configs.controller.js';
import { OidcTokenConfigsRepository } from './oidc-token-configs.repository.js';
import { OidcTokenConfigsService } from './oidc-token-configs.service.js';
import { OAuthCallbackController, UserOAuthTokensController } from './user-oauth-tokens.controller.js';
import { UserOAuthTokensRepository } from './user-oauth-tokens.repository.js';
import { UserOAuthTokensService } from './user-oauth-tokens.service.js';

/**
 * OAuth integrations (client registrations at external providers), each user's tokens from the
 * authorization-code flow with PKCE, and OIDC token configs (audiences of workload-identity
 * tokens).
 */
@Module({
  imports: [TypeOrmModule.forFeature([OAuthIntegration, UserOAuthToken, OAuthState, OidcTokenConfig])],
  controllers: [
    OAuthIntegrationsController,
    UserOAuthTokensController,
    OAuthCallbackController,
    OidcTokenConfigsController,
  ],
  providers: [
    OAuthIntegrationsRepository,
    UserOAuthTokensRepository,
    OidcTokenConfigsRepository,
    OAuthIntegrationsService,
    UserOAuthTokensService,
    OAuthFlowService,
    OidcTokenConfigsService,
    { provide: OAuthTokenClient, useClass: FetchOAuthTokenClient },
  ],
  exports: [UserOAuthTokensService],
})
export class OAuthModule {}
