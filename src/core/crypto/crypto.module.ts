import { Global, Module } from '@nestjs/common';
import { SecretBoxService } from './secret-box.service.js';

/** Encryption of secrets at rest, for every module. */
@Global()
@Module({ providers: [SecretBoxService], exports: [SecretBoxService] })
export class CryptoModule {}
