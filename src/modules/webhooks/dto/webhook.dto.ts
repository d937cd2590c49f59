import { ApiProperty } from '@nestjs/swagger';
import { ArrayMinSize, ArrayUnique } from 'class-validator';
import { applyDecorators } from '@nestjs/common';
import { EVENT_TYPES } from '../../../core/events/domain-events.js';
import { PageOf, PageQueryDto } from '../../../core/http/pagination.js';
import { BoolField, StringArrayField, StringField } from '../../../core/http/validation.js';

export const WEBHOOK_URL_MAX = 2048;
export const WEBHOOK_DESCRIPTION_MAX = 500;
/** What `events` may name: every event type, or `*` for all of them. */
export const WEBHOOK_EVENT_NAMES = ['*', ...EVENT_TYPES] as const;

/** `events`: one or more event type names, or `["*"]`. */
const EventsField = (optional: boolean) =>
  applyDecorators(
    StringArrayField({
      optional,
      maxItems: WEBHOOK_EVENT_NAMES.length,
      maxLength: 64,
      enum: WEBHOOK_EVENT_NAMES,
      description:
        'The event types sent to the endpoint (docs/webhooks.md, Event types), or `["*"]` for every type, ' +
        'those added later included',
      example: ['folder.created', 'report.changed'],
    }),
    ArrayMinSize(1, { message: '$property must name at least one event type, or *' }),
    ArrayUnique({ message: '$property must not name an event type twice' }),
  );

export class WebhookEndpointDto {
  @ApiProperty({ description: 'The endpoint’s id (a decimal string)', example: '7' }) id: string;
  @ApiProperty({ description: 'Where events are POSTed: an absolute http(s) URL' })
  url: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ type: String, isArray: true, description: 'Event type names, or `*`' }) events: string[];
  @ApiProperty({ description: 'False: nothing is sent (disabled by a user, or after repeated failures)' })
  enabled: boolean;
  @ApiProperty({ type: String, nullable: true, description: 'Why it is disabled' })
  disabledReason: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) disabledAt: string | null;
  @ApiProperty({
    type: 'integer',
    description:
      'Deliveries failed for good in a row since the last success; at `WEBHOOK_DISABLE_AFTER_FAILURES` the ' +
      'endpoint is disabled',
  })
  consecutiveFailures: number;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'The user who created it (null once deleted)',
  })
  createdBy: number | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      'After a rotation: until when the previous secret signs too; null when only one secret signs',
  })
  previousSecretExpiresAt: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class WebhookEndpointWithSecretDto extends WebhookEndpointDto {
  @ApiProperty({
    description:
      'The signing secret, `whsec_` and a base64 key: shown only in this answer (create and rotate-secret). Keep it ' +
      'to verify the `webhook-signature` header.',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  })
  secret: string;
}

export class WebhookEndpointsListDto extends PageOf(WebhookEndpointDto) {}

export class WebhookEndpointsQueryDto extends PageQueryDto {}

export class CreateWebhookEndpointDto {
  @StringField({
    minLength: 1,
    maxLength: WEBHOOK_URL_MAX,
    description:
      'An absolute `https` (or `http`) URL without credentials, on a host this service connects to (not loopback, ' +
      'private or metadata addresses unless the operator opens them)',
  })
  url: string;

  @EventsField(false)
  events: string[];

  @StringField({ optional: true, nullable: true, maxLength: WEBHOOK_DESCRIPTION_MAX })
  description?: string | null;

  @BoolField({ optional: true, description: 'Default true' })
  enabled?: boolean;
}

export class UpdateWebhookEndpointDto {
  @StringField({ optional: true, minLength: 1, maxLength: WEBHOOK_URL_MAX })
  url?: string;

  @EventsField(true)
  events?: string[];

  @StringField({ optional: true, nullable: true, maxLength: WEBHOOK_DESCRIPTION_MAX })
  description?: string | null;

  @BoolField({
    optional: true,
    description:
      'true enables a disabled endpoint (its failure count, reason and time are cleared); false disables it ' +
      '(its pending deliveries are not sent)',
  })
  enabled?: boolean;
}

/** rotate-secret and redeliver take no fields: an empty object or no body. */
export class NoFieldsDto {}
