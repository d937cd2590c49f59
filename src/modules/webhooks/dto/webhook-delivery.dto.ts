import { ApiProperty } from '@nestjs/swagger';
import { PageOf, PageQueryDto } from '../../../core/http/pagination.js';
import { EnumField, StringField } from '../../../core/http/validation.js';

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

export class WebhookResourceDto {
  @ApiProperty({ description: 'Its kind: `folder`, `workbook`, `dashboard`, `report`, `build`, ...' })
  type: string;
  @ApiProperty({
    oneOf: [{ type: 'integer' }, { type: 'string' }],
    description: 'Its id, as the resource’s own routes name it',
  })
  id: string | number;
}

export class WebhookDeliveryDto {
  @ApiProperty({ description: 'The delivery’s id (a decimal string)', example: '42' }) id: string;
  @ApiProperty({ example: '7' }) endpointId: string;
  @ApiProperty({
    description: 'The event’s id (`evt_...`), sent as `webhook-id`; the same for every delivery of the event',
  })
  eventId: string;
  @ApiProperty({ example: 'folder.created' }) eventType: string;
  @ApiProperty({ type: WebhookResourceDto }) resource: WebhookResourceDto;
  @ApiProperty({
    enum: WEBHOOK_DELIVERY_STATUSES,
    enumName: 'WebhookDeliveryStatus',
    description:
      '`pending`: not answered with a 2xx yet, retried until `WEBHOOK_RETRY_HOURS` after the first attempt; ' +
      '`succeeded`: an attempt was answered with a 2xx (never sent again); `failed`: the retries ran out, or the ' +
      'endpoint was disabled',
  })
  status: string;
  @ApiProperty({ type: 'integer', description: 'POSTs made so far' }) attempts: number;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'The last answer’s HTTP status (null: none came)',
  })
  lastStatusCode: number | null;
  @ApiProperty({ type: 'integer', nullable: true, description: 'How long the last attempt took, ms' })
  lastDurationMs: number | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'What went wrong last: `HTTP <status>: ` and the first 1 KB of the answer, or why no answer came; null after a 2xx',
  })
  lastError: string | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'When it is tried next (pending)',
  })
  nextAttemptAt: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) deliveredAt: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The delivery this one redelivers (`POST .../redeliver`)',
  })
  redeliveryOf: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export class WebhookEventDto {
  @ApiProperty({ example: 'evt_4f9c2d0e8b7a41c6a3d5e2f1b0c9d8e7' }) id: string;
  @ApiProperty({ example: 'folder.created' }) type: string;
  @ApiProperty({ format: 'date-time', description: 'When the change happened' }) timestamp: string;
  @ApiProperty({ type: WebhookResourceDto }) resource: WebhookResourceDto;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'The resource as its GET shows it, or for a deletion what identifies it',
  })
  data: Record<string, unknown>;
}

export class WebhookAttemptDto {
  @ApiProperty({ type: 'integer', description: 'From 1' }) attempt: number;
  @ApiProperty({ format: 'date-time' }) at: string;
  @ApiProperty({ type: 'integer', nullable: true, description: 'Null: no answer (network error, timeout)' })
  statusCode: number | null;
  @ApiProperty({ type: 'integer' }) durationMs: number;
  @ApiProperty({ type: String, nullable: true }) error: string | null;
}

export class WebhookDeliveryDetailDto extends WebhookDeliveryDto {
  @ApiProperty({ type: WebhookEventDto, description: 'Exactly the body that is POSTed' })
  event: WebhookEventDto;
  @ApiProperty({ type: WebhookAttemptDto, isArray: true, description: 'Every attempt, oldest first' })
  attemptLog: WebhookAttemptDto[];
}

export class WebhookDeliveriesListDto extends PageOf(WebhookDeliveryDto) {}

export class WebhookDeliveriesQueryDto extends PageQueryDto {
  @EnumField(WEBHOOK_DELIVERY_STATUSES, { optional: true, enumName: 'WebhookDeliveryStatus' })
  status?: (typeof WEBHOOK_DELIVERY_STATUSES)[number];

  @StringField({ optional: true, maxLength: 64, description: 'Only deliveries of this event type' })
  eventType?: string;
}
