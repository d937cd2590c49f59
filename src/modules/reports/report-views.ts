import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../../core/config/app-config.js';
import { Database } from '../../core/database/database.js';
import { ViewBuffer } from './view-buffer.js';

/** The application's view buffer, flushed every `REPORT_VIEW_FLUSH_MS` and on shutdown. */
@Injectable()
export class ReportViews extends ViewBuffer implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(ReportViews.name);
  private timer?: NodeJS.Timeout;

  constructor(
    db: Database,
    private readonly config: AppConfig,
  ) {
    super(
      (sql, params) => db.query(sql, params),
      (error) => this.logger.warn(`Could not record report views: ${(error as Error).message}`),
    );
  }

  onModuleInit(): void {
    this.timer = setInterval(() => void this.flush(), this.config.reportViewFlushMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
