import { ApiProperty } from '@nestjs/swagger';
import { AppThemeResponseDto } from '../../settings/dto/app-theme.dto.js';

/** `GET /users/embed-theme`: the account's theme and the caller's own choice of scheme. */
export class EmbedThemeDto extends AppThemeResponseDto {
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      "The caller's own `settings.theme` (`PATCH /users/me/settings`), such as `dark`; null when unset",
  })
  theme: string | null;
}
