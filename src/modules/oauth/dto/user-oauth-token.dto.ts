import { ApiProperty } from '@nestjs/swagger';

export const TOKEN_STATUSES = ['active', 'expired', 'error'] as const;
export type TokenStatus = (typeof TOKEN_STATUSES)[number];

export class OAuthErrorDto {
  @ApiProperty({ example: 'access_denied', description: 'The OAuth error code, or one of ours' })
  error: string;

  @ApiProperty({ type: String, nullable: true }) errorDescription: string | null;
}

/** A user's connection to one integration. Tokens themselves are never returned. */
export class UserOAuthTokenDto {
  @ApiProperty() id: number;
  @ApiProperty() userId: number;
  @ApiProperty() integrationId: number;

  @ApiProperty({
    enum: TOKEN_STATUSES,
    enumName: 'UserOAuthTokenStatus',
    description:
      '`active`: usable tokens are stored. `expired`: the access token has expired and no usable refresh token ' +
      'is stored. `error`: the last authorization failed (see `lastError`)',
  })
  status: TokenStatus;

  @ApiProperty({ type: OAuthErrorDto, nullable: true, description: 'Why the last authorization failed' })
  lastError: OAuthErrorDto | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true }) accessTokenExpiresAt: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) refreshTokenExpiresAt: string | null;
  @ApiProperty({ type: String, format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: String, format: 'date-time' }) updatedAt: string;
}

/** initiate takes no fields; an empty object or no body. */
export class InitiateOAuthFlowDto {}

export class InitiateOAuthFlowResponseDto {
  @ApiProperty({
    format: 'uri',
    description:
      'Send the user’s browser here: the provider’s authorization endpoint with the request parameters',
  })
  authorizationUrl: string;

  @ApiProperty({ description: 'The `state` the URL carries; single use' }) state: string;

  @ApiProperty({ type: String, format: 'date-time', description: 'The callback must come before this' })
  expiresAt: string;
}
