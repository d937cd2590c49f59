import { ApiProperty } from '@nestjs/swagger';

/** The one error shape of every endpoint. */
export class ErrorResponseDto {
  @ApiProperty({ example: 404 }) statusCode: number;

  @ApiProperty({ example: 'Not Found' }) error: string;

  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
    description: 'A sentence, or for validation failures one sentence per bad field',
  })
  message: string | string[];

  @ApiProperty({ example: 'not_found', description: 'Stable machine-readable code' }) code: string;
}
