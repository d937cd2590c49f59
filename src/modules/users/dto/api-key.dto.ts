import { ApiProperty } from '@nestjs/swagger';
import { PageOf, PageQueryDto } from '../../../core/http/pagination.js';
import { DateTimeField, StringField } from '../../../core/http/validation.js';

export class ApiKeyCreateDto {
  @StringField({ minLength: 1, maxLength: 255, example: 'CI pipeline' }) name: string;

  @DateTimeField({
    optional: true,
    nullable: true,
    description: 'When the key stops working; never when absent',
  })
  expiresAt?: string | null;
}

export class ApiKeyDto {
  @ApiProperty() id: number;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'The first characters of the secret, to recognise it' }) prefix: string;
  @ApiProperty() userId: number;
  @ApiProperty({ type: String, format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) lastUsedAt: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) expiresAt: string | null;
}

export class ApiKeyCreatedDto extends ApiKeyDto {
  @ApiProperty({ description: 'The secret. Shown only in this response; store it now.' }) token: string;
}

export class ApiKeysListDto extends PageOf(ApiKeyDto) {}

export class ApiKeysQueryDto extends PageQueryDto {}
