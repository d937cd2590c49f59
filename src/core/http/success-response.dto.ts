import { ApiOkResponse, ApiProperty } from '@nestjs/swagger';

/**
 * The body of a delete the reference documents as `200` with a JSON body (folders, workbooks,
 * reports, users, OAuth integrations, user OAuth tokens, OIDC token configs): clients generated
 * from it parse the body, so these answer `{"success": true}` rather than an empty 204.
 */
export class SuccessResponseDto {
  @ApiProperty({ example: true }) success: boolean;
}

/** The one success body of those deletes. */
export const SUCCESS: Readonly<SuccessResponseDto> = Object.freeze({ success: true });

/** Documents `200 {"success": true}` on a delete. */
export const ApiSuccessResponse = (description: string) =>
  ApiOkResponse({ type: SuccessResponseDto, description });
