import { ApiProperty } from '@nestjs/swagger';
import { PageOf, PageQueryDto } from '../http/pagination.js';
import { DateTimeField, EnumField, IntField, StringField } from '../http/validation.js';

export const AUDIT_OUTCOMES = ['success', 'failure'] as const;
export const AUDIT_ACTOR_TYPES = ['user', 'embed_user'] as const;

export class AuditLogQueryDto extends PageQueryDto {
  @IntField({ optional: true, query: true, min: 1, description: 'Only events of this actor id' })
  actorId?: number;

  @EnumField(AUDIT_ACTOR_TYPES, { optional: true, description: 'Narrows actorId to one kind of actor' })
  actorType?: (typeof AUDIT_ACTOR_TYPES)[number];

  @StringField({ optional: true, maxLength: 100, description: 'The operation id, e.g. `createUser`' })
  action?: string;

  @StringField({
    optional: true,
    maxLength: 64,
    description: 'The collection the target belongs to, as in the path, e.g. `users`',
  })
  targetType?: string;

  @StringField({ optional: true, maxLength: 255, description: 'The target id (with targetType)' })
  targetId?: string;

  @EnumField(AUDIT_OUTCOMES, { optional: true }) outcome?: (typeof AUDIT_OUTCOMES)[number];

  @DateTimeField({ optional: true, description: 'Events at or after this instant' }) from?: string;

  @DateTimeField({ optional: true, description: 'Events before this instant' }) to?: string;
}

export class AuditEventDto {
  @ApiProperty({ description: 'Increases with time' }) id: string;
  @ApiProperty({ format: 'date-time' }) occurredAt: string;
  @ApiProperty({ enum: AUDIT_ACTOR_TYPES }) actorType: string;
  @ApiProperty() actorId: number;
  @ApiProperty({ type: String, nullable: true }) actorEmail: string | null;
  @ApiProperty({ description: 'The operation id of the route' }) action: string;
  @ApiProperty() method: string;
  @ApiProperty() path: string;
  @ApiProperty({ type: String, nullable: true }) targetType: string | null;
  @ApiProperty({ type: String, nullable: true }) targetId: string | null;
  @ApiProperty({ description: 'The X-Request-Id of the request' }) requestId: string;
  @ApiProperty({ enum: AUDIT_OUTCOMES }) outcome: string;
  @ApiProperty() statusCode: number;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description:
      'What the entry records beyond its request, for the few requests that say more: a merge that overrode ' +
      'the merge gate has `{"mergeGateOverridden": true, "missing": [...]}`; null otherwise',
  })
  details: Record<string, unknown> | null;
}

export class AuditLogListDto extends PageOf(AuditEventDto) {}
