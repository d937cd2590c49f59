import { hkdfSync } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { SecretBox } from './secret-box.js';

/**
 * The service's {@link SecretBox}, keyed by `SECRETS_KEY`. A production process never seals or
 * opens with the development key (the command line may start without a key for commands that
 * touch no secret).
 */
@Injectable()
export class SecretBoxService {
  private readonly box: SecretBox;

  constructor(private readonly config: AppConfig) {
    this.box = new SecretBox(config.secretsKey);
    if (config.secretsKeyIsDevelopmentDefault && config.env === 'development') {
      new Logger(SecretBoxService.name).warn('SECRETS_KEY is not set: secrets use the development key');
    }
  }

  seal(plaintext: Buffer | string, context: string): string {
    this.assertUsable();
    return this.box.seal(plaintext, context);
  }

  open(sealed: string, context: string): Buffer {
    this.assertUsable();
    return this.box.open(sealed, context);
  }

  /**
   * A 32-byte key for one purpose (`label`), derived from `SECRETS_KEY` with HKDF-SHA256: a key
   * for signing credentials that is never the key that seals secrets.
   */
  derivedKey(label: string): Buffer {
    this.assertUsable();
    return Buffer.from(hkdfSync('sha256', this.config.secretsKey, Buffer.alloc(0), label, 32));
  }

  private assertUsable(): void {
    if (this.config.env === 'production' && this.config.secretsKeyIsDevelopmentDefault) {
      throw new Error('SECRETS_KEY is not configured');
    }
  }
}
