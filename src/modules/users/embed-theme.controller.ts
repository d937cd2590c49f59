import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { EmbedThemeDto } from './dto/embed-theme.dto.js';
import { EmbedThemeService } from './embed-theme.service.js';

/**
 * The command-line tool's `users embed-theme` (docs/command-line-tool.md). Registered before the
 * users controller, so `embed-theme` is not read as a user id.
 */
@ApiTags('Users')
@Controller('api/v1/users')
export class EmbedThemeController {
  constructor(private readonly themes: EmbedThemeService) {}

  @Get('embed-theme')
  @Authenticated()
  @ApiOperation({
    summary: 'The embed theme of the calling user',
    description:
      "The account's `appTheme` and `applyThemeGlobally` (as `GET /app-theme` answers them) and the caller's " +
      'own `settings.theme`, null when unset.',
  })
  @ApiOkResponse({ type: EmbedThemeDto })
  getEmbedTheme(@CurrentPrincipal() actor: Principal): Promise<EmbedThemeDto> {
    return this.themes.forCaller(actor);
  }
}
