import { Injectable } from '@nestjs/common';

/**
 * The time dashboard exports are started, expire and are pruned at. One provider, so a test walks
 * an export past its expiry by moving this clock (`jest.spyOn(app.get(DashboardExportClock),
 * 'now')`) instead of waiting.
 */
@Injectable()
export class DashboardExportClock {
  now(): Date {
    return new Date();
  }
}
