import {
  Global,
  Inject,
  Injectable,
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ClsPluginTransactional } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { ClsModule } from 'nestjs-cls';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { Database } from './database.js';
import { dataSourceOptions } from './data-source-options.js';
import { EmbeddedDatabase } from './embedded-database.js';
import { migrate } from './migrator.js';

export const EMBEDDED_DATABASE = Symbol('EMBEDDED_DATABASE');

@Module({
  providers: [
    {
      provide: EMBEDDED_DATABASE,
      inject: [AppConfig],
      useFactory: (config: AppConfig) =>
        config.embedded ? EmbeddedDatabase.open(config.database.dataDir) : null,
    },
  ],
  exports: [EMBEDDED_DATABASE],
})
class EmbeddedDatabaseModule {}

/** Closes PGlite and its lock file after the data source is gone. */
@Injectable()
class EmbeddedDatabaseCloser implements OnApplicationShutdown {
  constructor(
    @Inject(EMBEDDED_DATABASE) private readonly embedded: EmbeddedDatabase | null,
    private readonly dataSource: DataSource,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    if (!this.embedded) return;
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
    await this.embedded.close();
  }
}

@Global()
@Module({})
export class DatabaseModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        EmbeddedDatabaseModule,
        TypeOrmModule.forRootAsync({
          imports: [EmbeddedDatabaseModule],
          inject: [EMBEDDED_DATABASE],
          useFactory: (embedded: EmbeddedDatabase | null) => ({
            ...dataSourceOptions(config, embedded),
            autoLoadEntities: true,
          }),
          dataSourceFactory: async (options) => {
            const dataSource = await new DataSource(options!).initialize();
            if (config.database.runMigrations) await migrate(dataSource, { lock: !config.embedded });
            return dataSource;
          },
        }),
        // The unit of work: the transaction of the current async context, joined by every query
        // made through `Database` (no request middleware: a context opens with each transaction).
        ClsModule.forRoot({
          global: true,
          plugins: [
            new ClsPluginTransactional({
              adapter: new TransactionalAdapterTypeOrm({ dataSourceToken: DataSource }),
            }),
          ],
        }),
      ],
      providers: [EmbeddedDatabaseCloser, Database],
      exports: [EmbeddedDatabaseModule, Database],
    };
  }
}
