import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { AppThemeResponseDto } from './dto/app-theme.dto.js';
import { SettingsService } from './settings.service.js';

/** The command-line tool's `app theme` (docs/command-line-tool.md): the theme part of `GET /app-config`. */
@ApiTags('App Theme')
@Controller('api/v1/app-theme')
export class AppThemeController {
  constructor(private readonly settings: SettingsService) {}

  @Get()
  @Authenticated()
  @ApiOperation({
    summary: 'Get the app theme',
    description:
      "The account's `appTheme` and `applyThemeGlobally`, as `GET /app-config` answers them (admins change them " +
      'with `PUT /app-config`). Any user of the account may read it.',
  })
  @ApiOkResponse({ type: AppThemeResponseDto })
  getAppTheme(@CurrentPrincipal() actor: Principal): Promise<AppThemeResponseDto> {
    return this.settings.getAppTheme(actor.accountId);
  }
}
