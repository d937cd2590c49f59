import { ApiProperty } from '@nestjs/swagger';
import { BoolField, EnumField, StringField } from '../../../core/http/validation.js';

export const WEEKDAYS = [
  'monday',
  'tuesday',
  'wednesday',
  'thursday',
  'friday',
  'saturday',
  'sunday',
] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** `HH:MM`, 24-hour. */
export const TIME_OF_DAY = /^([01][0-9]|2[0-3]):[0-5][0-9]$/;

export class TenantSettingsDto {
  @ApiProperty({ description: 'Whether the audit log is on' }) auditLogEnabled: boolean;
  @ApiProperty({ description: 'Same as auditLogEnabled: the state in force now' })
  auditLogEnabledCurrent: boolean;
  @ApiProperty({
    type: 'integer',
    description: 'When the audit log was last switched on, in epoch milliseconds; 0 if never',
  })
  auditLogEnabledTimestamp: number;
  @ApiProperty() hasSupportAccess: boolean;
  @ApiProperty() useAIBIUserInterface: boolean;
  @ApiProperty() maintenanceWindowEnabled: boolean;
  @ApiProperty({ enum: WEEKDAYS, enumName: 'MaintenanceWindowDay' }) maintenanceWindowDay: Weekday;
  @ApiProperty({ example: '02:00', description: '`HH:MM`, 24-hour' }) maintenanceWindowTime: string;
  @ApiProperty() oidcEnabled: boolean;
  @ApiProperty({
    description:
      'Whether embed users may run reports’ Python (`POST /embed/dashboard/{publicId}/python-run`); off by default',
  })
  pythonAnalysisEnabled: boolean;
}

/** PUT /tenant/settings: a partial merge; omitted or null fields are left unchanged. */
export class TenantSettingsInputDto {
  @BoolField({ optional: true, nullable: true }) auditLogEnabled?: boolean | null;
  @BoolField({ optional: true, nullable: true }) hasSupportAccess?: boolean | null;
  @BoolField({ optional: true, nullable: true }) useAIBIUserInterface?: boolean | null;
  @BoolField({ optional: true, nullable: true }) maintenanceWindowEnabled?: boolean | null;
  @EnumField(WEEKDAYS, { optional: true, nullable: true, enumName: 'MaintenanceWindowDay' })
  maintenanceWindowDay?: Weekday | null;
  @StringField({
    optional: true,
    nullable: true,
    maxLength: 5,
    pattern: TIME_OF_DAY,
    patternMessage: '$property must be a 24-hour time HH:MM',
    example: '02:00',
  })
  maintenanceWindowTime?: string | null;
  @BoolField({ optional: true, nullable: true }) oidcEnabled?: boolean | null;
  @BoolField({ optional: true, nullable: true }) pythonAnalysisEnabled?: boolean | null;
}
