import { Module } from '@nestjs/common';
import { DashboardRenderer } from './dashboard-renderer.js';
import { Mailer } from './mailer.js';

/**
 * What a scheduled notification needs to reach its recipients: the dashboard rendered to PDF or PNG
 * in headless Chromium ({@link DashboardRenderer}) and SMTP delivery ({@link Mailer}). Both read
 * the global AppConfig (`rendering`, `mail`); both release their browser or connections when the
 * application closes. The notifications module imports this one.
 */
@Module({
  providers: [DashboardRenderer, Mailer],
  exports: [DashboardRenderer, Mailer],
})
export class NotificationDeliveryModule {}
