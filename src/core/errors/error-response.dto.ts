import { ApiProperty } from '@nestjs/swagger';

/**
 * The one error shape of every endpoint. Each operation's error responses carry examples with
 * their own status and codes (see `@ApiErrors`); the codes are listed in `error-codes.ts`.
 */
export class ErrorResponseDto {
  @ApiProperty({ description: 'The HTTP status, repeated', minimum: 400, maximum: 599 }) statusCode: number;

  @ApiProperty({ description: 'The reason phrase of the status' }) error: string;

  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
    description: 'A sentence, or for validation failures one sentence per bad field',
  })
  message: string | string[];

  @ApiProperty({ description: 'Stable machine-readable code (see the error codes in the API conventions)' })
  code: string;
}
