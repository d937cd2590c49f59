import { Injectable } from '@nestjs/common';
import { SecretBoxService } from '../../core/crypto/secret-box.service.js';

/** The sealing context of an endpoint's secrets: bound to its account and endpoint. */
export const secretContext = (accountId: number, endpointId: number): string =>
  `webhook-endpoint-secret:${JSON.stringify([accountId, endpointId])}`;

/** Seals and opens endpoints' signing secrets (AES-256-GCM, `SecretBoxService`). */
@Injectable()
export class WebhookSecrets {
  constructor(private readonly box: SecretBoxService) {}

  sealed(accountId: number, endpointId: number, secret: string): string {
    return this.box.seal(secret, secretContext(accountId, endpointId));
  }

  /** The secret, or null when it does not open (altered, copied from another row, another key). */
  open(accountId: number, endpointId: number, sealed: string): string | null {
    try {
      return this.box.open(sealed, secretContext(accountId, endpointId)).toString('utf8');
    } catch {
      return null;
    }
  }
}
