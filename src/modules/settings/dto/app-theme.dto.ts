import { ApiProperty } from '@nestjs/swagger';
import { AppThemeDto } from './app-config.dto.js';

/** `GET /app-theme`: the theme fields of the app config. */
export class AppThemeResponseDto {
  @ApiProperty({ type: AppThemeDto, nullable: true, description: "The account's theme; null when never set" })
  appTheme: AppThemeDto | null;
  @ApiProperty({ description: 'Whether the theme applies to the whole app, not only to embedded content' })
  applyThemeGlobally: boolean;
}
