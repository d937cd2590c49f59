import { Module } from '@nestjs/common';
import { ConditionalRequests } from './conditional-requests.js';

/**
 * Conditional writes (`If-Match`, `If-None-Match`): the route table and the resource locks the
 * middleware of `configureConditionalRequests` uses, the locks' connections closed at shutdown.
 */
@Module({
  providers: [ConditionalRequests],
})
export class ConditionalRequestsModule {}
