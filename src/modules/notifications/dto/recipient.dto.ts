import { ApiProperty } from '@nestjs/swagger';
import { ArrayMinSize, ValidateBy } from 'class-validator';
import { PageOf, PageQueryDto } from '../../../core/http/pagination.js';
import {
  EmailField,
  EnumField,
  IntField,
  NestedField,
  ObjectField,
  StringArrayField,
  StringField,
} from '../../../core/http/validation.js';
import { UserAttributeInputDto } from '../../embedding/dto/embed-session.dto.js';
import { isMailbox, MAILBOX_RULE } from '../mailbox.js';

export const RECIPIENT_TYPES = ['USER', 'EMBED_USER', 'SLACK'] as const;
export type RecipientType = (typeof RECIPIENT_TYPES)[number];

export class NotificationRecipientInputDto {
  @EnumField(RECIPIENT_TYPES, {
    enumName: 'NotificationRecipientType',
    description: '`USER` (a console user), `EMBED_USER` (an embed user); `SLACK` is refused with 400',
  })
  type: RecipientType;

  @IntField({ optional: true, nullable: true, min: 1, description: 'USER: the user (or email)' })
  userId?: number | null;

  @EmailField({
    optional: true,
    nullable: true,
    description:
      'USER: the user’s email (or userId). EMBED_USER: the address to give the embed user. ' +
      `Must be ${MAILBOX_RULE}`,
  })
  @ValidateBy({
    name: 'isMailbox',
    validator: { validate: isMailbox, defaultMessage: () => `$property must be ${MAILBOX_RULE}` },
  })
  email?: string | null;

  @StringField({ optional: true, nullable: true, maxLength: 64, description: 'EMBED_USER: the embed tenant' })
  embedTenantName?: string | null;

  @StringField({
    optional: true,
    nullable: true,
    maxLength: 255,
    description: 'EMBED_USER: the embed user’s external id (provisioned when new)',
  })
  externalId?: string | null;

  @ObjectField({
    optional: true,
    nullable: true,
    description: 'EMBED_USER: the security context the dashboard is rendered under for this recipient',
  })
  securityContext?: Record<string, unknown> | null;

  @NestedField(() => UserAttributeInputDto, { optional: true, nullable: true, isArray: true, maxItems: 100 })
  userAttributes?: UserAttributeInputDto[] | null;

  @StringArrayField({
    optional: true,
    nullable: true,
    maxItems: 100,
    maxLength: 255,
    description: 'EMBED_USER: groups of the account the embed user is a member of (they must exist)',
  })
  groups?: string[] | null;

  @StringField({ optional: true, nullable: true, maxLength: 255, description: 'SLACK (not supported)' })
  channelId?: string | null;

  @StringField({ optional: true, nullable: true, maxLength: 255, description: 'SLACK (not supported)' })
  channelName?: string | null;
}

export class AddNotificationRecipientsDto {
  @NestedField(() => NotificationRecipientInputDto, { isArray: true, maxItems: 1000 })
  @ArrayMinSize(1)
  recipients: NotificationRecipientInputDto[];
}

export class RemoveNotificationRecipientInputDto {
  @EnumField(RECIPIENT_TYPES, { enumName: 'NotificationRecipientType' })
  type: RecipientType;

  @ApiProperty({
    oneOf: [{ type: 'integer' }, { type: 'string' }],
    description: 'userId (USER), embedUserId (EMBED_USER) or channelId (SLACK)',
  })
  @ValidateBy({
    name: 'isRecipientId',
    validator: {
      validate: (v) =>
        (typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 2_147_483_647) ||
        (typeof v === 'string' && v.length >= 1 && v.length <= 255),
      defaultMessage: () => 'id must be a positive integer or a string',
    },
  })
  id: number | string;

  @StringField({
    optional: true,
    nullable: true,
    maxLength: 64,
    description: 'EMBED_USER: the embed tenant of the embed user',
  })
  embedTenantName?: string | null;
}

export class RemoveNotificationRecipientsDto {
  @NestedField(() => RemoveNotificationRecipientInputDto, { isArray: true, maxItems: 1000 })
  @ArrayMinSize(1)
  recipients: RemoveNotificationRecipientInputDto[];
}

export class NotificationRecipientDto {
  @ApiProperty({ enum: RECIPIENT_TYPES, enumName: 'NotificationRecipientType' }) type: RecipientType;
  @ApiProperty({ type: 'integer', nullable: true }) userId: number | null;
  @ApiProperty({ type: String, nullable: true }) username: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Where the notification is mailed' }) email:
    string | null;
  @ApiProperty({ type: 'integer', nullable: true }) embedUserId: number | null;
  @ApiProperty({ type: String, nullable: true }) embedTenantName: string | null;
  @ApiProperty({ type: String, nullable: true }) externalId: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Always null: Slack is not supported' })
  channelId: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Always null: Slack is not supported' })
  channelName: string | null;
}

export class NotificationRecipientsListDto extends PageOf(NotificationRecipientDto) {}

export class NotificationRecipientsMutationDto {
  @ApiProperty({ type: NotificationRecipientDto, isArray: true, description: 'Newly subscribed' })
  createdRecipients: NotificationRecipientDto[];
  @ApiProperty({
    type: NotificationRecipientDto,
    isArray: true,
    description: 'Already subscribed; their embed security context, attributes or groups changed',
  })
  updatedRecipients: NotificationRecipientDto[];
  @ApiProperty({
    type: NotificationRecipientDto,
    isArray: true,
    description: 'Already subscribed, unchanged',
  })
  unchangedRecipients: NotificationRecipientDto[];
}

export class RecipientsQueryDto extends PageQueryDto {}

export const DELIVERY_STATUSES = [
  'queued',
  'held',
  'sending',
  'sent',
  'failed',
  'unknown',
  'skipped',
] as const;

/** A resend of a failed delivery: when, by whom, and the failure it resent. */
export class NotificationDeliveryResendDto {
  @ApiProperty({ format: 'date-time' }) at: string;
  @ApiProperty({ type: 'integer', nullable: true, description: 'The user who resent it' }) byUserId:
    number | null;
  @ApiProperty({ description: 'The address the failed attempt went to' }) email: string;
  @ApiProperty({ type: String, nullable: true, description: 'Why that attempt failed (its `lastError`)' })
  error: string | null;
}

export class NotificationDeliveryDto {
  @ApiProperty({ description: 'The delivery’s id (a decimal string)' }) id: string;
  @ApiProperty({ description: 'The run (firing) it belongs to' }) runId: string;
  @ApiProperty({ format: 'date-time', description: 'The occurrence the run fired for' }) scheduledFor: string;
  @ApiProperty({
    enum: ['USER', 'EMBED_USER', 'OWNER'],
    enumName: 'NotificationDeliveryRecipientType',
    description:
      '`USER` and `EMBED_USER`: a recipient. `OWNER`: the notice to the notification’s owner (the user who ' +
      'made it) of a run that could mail some recipients nothing, saying why; no attachment',
  })
  recipientType: string;
  @ApiProperty({ type: 'integer', nullable: true }) userId: number | null;
  @ApiProperty({ type: 'integer', nullable: true }) embedUserId: number | null;
  @ApiProperty() email: string;
  @ApiProperty({
    enum: DELIVERY_STATUSES,
    enumName: 'NotificationDeliveryStatus',
    description:
      '`queued`, `held` (its notification is paused: it waits for the resume), `sending`, `sent`, ' +
      '`failed` (refused by the server, temporary failures past the last ' +
      'attempt, or never sent because the run made nothing to send: every report failed, the rendering ' +
      'failed, or mail is not configured; `lastError` says which), `unknown` (the worker sending it stopped; ' +
      'not resent, so nobody is mailed twice), `skipped` (never sent: the account’s hourly delivery limit ' +
      'was reached; `lastError` says so)',
  })
  status: string;
  @ApiProperty({ type: 'integer', description: 'Send attempts made' }) attempts: number;
  @ApiProperty({ type: String, nullable: true }) lastError: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The SMTP server’s last answer' }) smtpResponse:
    string | null;
  @ApiProperty({ type: String, nullable: true }) messageId: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    enum: ['not_produced'],
    description: '`not_produced` when the notification asks for an AI summary (none is made here); else null',
  })
  aiSummary: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) sentAt: string | null;
  @ApiProperty({
    type: NotificationDeliveryResendDto,
    isArray: true,
    description:
      'Each resend of the delivery after it failed (`POST .../deliveries/{deliveryId}/resend`), oldest first, ' +
      'with the address and error of the failure it resent; the delivery itself shows the latest attempt ' +
      '(`email` is the address it was resent to, `attempts` counts every attempt)',
  })
  resends: NotificationDeliveryResendDto[];
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export class NotificationDeliveriesListDto extends PageOf(NotificationDeliveryDto) {}
