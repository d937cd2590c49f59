import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccessGuard } from './access.guard.js';
import { AccessService } from './access.service.js';
import { AuthService } from './auth.service.js';
import { BearerStrategy } from './bearer.strategy.js';
import { EmbedTokensService } from './embed-tokens.service.js';
import { Policy } from './entities/policy.entity.js';
import { GitReadCredentials } from './git-read-credentials.js';
import { GrantsRepository } from './grants.repository.js';
import { PrincipalCache } from './principal-cache.js';

/**
 * Authentication (the global guard, tokens resolved through the `PrincipalSource` the users
 * module provides) and object access (grants in `policies`, owned here).
 */
@Global()
@Module({
  imports: [PassportModule.register({ session: false }), TypeOrmModule.forFeature([Policy])],
  providers: [
    AuthService,
    PrincipalCache,
    BearerStrategy,
    AccessService,
    GrantsRepository,
    EmbedTokensService,
    GitReadCredentials,
    { provide: APP_GUARD, useClass: AccessGuard },
  ],
  exports: [AuthService, AccessService, EmbedTokensService, GitReadCredentials, PrincipalCache],
})
export class AuthModule {}
