import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { AccessGuard } from './access.guard.js';
import { AccessService } from './access.service.js';
import { AuthService } from './auth.service.js';
import { BearerStrategy } from './bearer.strategy.js';
import { EmbedTokensService } from './embed-tokens.service.js';

@Global()
@Module({
  imports: [PassportModule.register({ session: false })],
  providers: [
    AuthService,
    BearerStrategy,
    AccessService,
    EmbedTokensService,
    { provide: APP_GUARD, useClass: AccessGuard },
  ],
  exports: [AuthService, AccessService, EmbedTokensService],
})
export class AuthModule {}
