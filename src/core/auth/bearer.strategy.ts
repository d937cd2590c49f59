import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import { AuthService } from './auth.service.js';
import type { Principal } from './principal.js';

/** Passport's bearer strategy, resolving the token through {@link AuthService}. */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(private readonly auth: AuthService) {
    super();
  }

  async validate(token: string): Promise<Principal | false> {
    return (await this.auth.authenticate(token)) ?? false;
  }
}
