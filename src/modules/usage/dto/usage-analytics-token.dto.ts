import { ApiProperty } from '@nestjs/swagger';

export class UsageAnalyticsTokenDto {
  @ApiProperty({
    description:
      'A JWT (HS256) valid for one hour, scoped to the caller’s account. Send it as ' +
      '`Authorization: Bearer <token>` to `apiUrl`.',
  })
  token: string;

  @ApiProperty({ description: 'Base URL of the usage-analytics data API to query with the token' })
  apiUrl: string;

  @ApiProperty({ type: 'integer', description: 'The usage-analytics deployment the token is for' })
  deploymentId: number;

  @ApiProperty({
    type: String,
    format: 'date-time',
    description: 'When the token expires (one hour after issue); ask for a new one before then',
  })
  expiresAt: string;
}
