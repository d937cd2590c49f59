import { ApiProperty } from '@nestjs/swagger';

/** The body of this module's deletes, as `DELETE /api/v1/users/{id}` answers. */
export class IntegrationsSuccessDto {
  @ApiProperty({ example: true }) success: boolean;
}
