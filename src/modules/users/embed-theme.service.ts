import { Injectable } from '@nestjs/common';
import type { Principal } from '../../core/auth/principal.js';
import { notFound } from '../../core/errors/not-found.js';
import { SettingsService } from '../settings/settings.service.js';
import type { EmbedThemeDto } from './dto/embed-theme.dto.js';
import { UsersRepository } from './users.repository.js';

/**
 * The theme embedded content shows the calling user (`GET /users/embed-theme`): the account's app
 * theme (the settings module's app config) and the user's own `settings.theme`.
 */
@Injectable()
export class EmbedThemeService {
  constructor(
    private readonly settings: SettingsService,
    private readonly users: UsersRepository,
  ) {}

  async forCaller(actor: Principal): Promise<EmbedThemeDto> {
    const [theme, user] = await Promise.all([
      this.settings.getAppTheme(actor.accountId),
      this.users.find(actor.accountId, actor.userId),
    ]);
    if (!user) throw notFound('User', actor.userId);
    const own = user.settings.theme;
    return { ...theme, theme: typeof own === 'string' ? own : null };
  }
}
