import { Module } from '@nestjs/common';
import { DataApiClientModule } from '../data-api-client/data-api-client.module.js';
import { EmbeddingModule } from '../embedding/embedding.module.js';
import { SettingsModule } from '../settings/settings.module.js';
import { PythonRunCache } from './python-run.cache.js';
import { PythonRunsController } from './python-runs.controller.js';
import { PythonRunsService } from './python-runs.service.js';
import { PythonSandboxHost } from './python-sandbox.host.js';

/**
 * Python report runs (`POST /embed/dashboard/{publicId}/python-run`): the sandbox pool of the API
 * process (`sandbox/`, Pyodide inside bubblewrap), the result cache, and the route, which reads
 * the dashboard through the embedding module, the account's switch through settings and the rows
 * through the data API.
 */
@Module({
  imports: [EmbeddingModule, SettingsModule, DataApiClientModule],
  controllers: [PythonRunsController],
  providers: [PythonSandboxHost, PythonRunCache, PythonRunsService],
})
export class PythonRunsModule {}
