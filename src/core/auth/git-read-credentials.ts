import { createHmac, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { SecretBoxService } from '../crypto/secret-box.service.js';
import { Action } from './action.js';
import type { Principal } from './principal.js';

const PREFIX = 'gitr_';
/** `gitr_<accountId>_<deploymentId>_<expires, Unix seconds>_<HMAC-SHA256, base64url>`. */
const SHAPE = /^gitr_([1-9]\d{0,9})_([1-9]\d{0,9})_([1-9]\d{0,11})_([A-Za-z0-9_-]{43})$/;
const KEY_LABEL = 'git-read-credential:v1';

/**
 * Short-lived credentials that read one deployment's model over git and nothing else: what a
 * deployment's pods fetch their model with (`DEPLOYMENT_RUNTIME=kubernetes`). Nothing is stored:
 * a credential carries its account, deployment and expiry, signed with a key derived from
 * `SECRETS_KEY`, so the same inputs give the same credential (a repeated apply changes nothing)
 * and it dies at its expiry or with its deployment (the access check finds no deployment).
 *
 * It is taken only where a route accepts Basic credentials (the git routes), through the one
 * access guard, and resolves to a principal that holds `SchemaRead` (and `DeploymentRead`, to
 * see it) on that deployment alone ({@link Principal.scope}): no user, no role, no grant, and no
 * dev branch of anyone's.
 */
@Injectable()
export class GitReadCredentials {
  private key: Buffer | null = null;

  constructor(private readonly secrets: SecretBoxService) {}

  /** Whether `token` has the form of a git read credential (valid or not). */
  static isOne(token: string): boolean {
    return token.startsWith(PREFIX);
  }

  issue(accountId: number, deploymentId: number, expiresAt: Date): string {
    const exp = Math.floor(expiresAt.getTime() / 1000);
    return `${PREFIX}${accountId}_${deploymentId}_${exp}_${this.sign(accountId, deploymentId, exp)}`;
  }

  /** The principal of a valid, unexpired credential, else null. */
  verify(token: string, now = Date.now()): Principal | null {
    const m = SHAPE.exec(token);
    if (!m) return null;
    const [accountId, deploymentId, exp] = [Number(m[1]), Number(m[2]), Number(m[3])];
    if (exp * 1000 <= now) return null;
    const expected = Buffer.from(this.sign(accountId, deploymentId, exp));
    const given = Buffer.from(m[4]);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    // Seeing the deployment (DeploymentRead) is what every access check asks first.
    const actions = new Set([Action.SchemaRead, Action.DeploymentRead]);
    return {
      userId: 0,
      accountId,
      email: '',
      apiKeyId: 0,
      roleIds: [],
      groupIds: [],
      actions: new Set(),
      objectActions: actions,
      typeActions: new Map(),
      isAdmin: false,
      scope: { type: 'Deployment', id: deploymentId, actions },
    };
  }

  private sign(accountId: number, deploymentId: number, exp: number): string {
    this.key ??= this.secrets.derivedKey(KEY_LABEL);
    return createHmac('sha256', this.key)
      .update(`git-read:${accountId}:${deploymentId}:${exp}`)
      .digest('base64url');
  }
}
