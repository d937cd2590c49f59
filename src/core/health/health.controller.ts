import { Controller, Get, HttpStatus, Inject, Res } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { Public } from '../auth/access.decorators.js';
import { JOB_DISPATCHER, type JobDispatcher } from '../queue/dispatcher.js';
import { withTimeout } from '../timeout.js';

class HealthCheckDto {
  @ApiProperty({ enum: ['up', 'down', 'not-configured'] }) status: string;
  @ApiProperty({ required: false }) detail?: string;
}

class ReadinessDto {
  @ApiProperty({ enum: ['ok', 'error'] }) status: 'ok' | 'error';
  @ApiProperty({ type: HealthCheckDto }) database: HealthCheckDto;
  @ApiProperty({ type: HealthCheckDto }) redis: HealthCheckDto;
}

class LivenessDto {
  @ApiProperty({ enum: ['ok'] }) status: 'ok';
}

/** Probes for orchestrators. Public, and exempt from the HTTPS rule and rate limiting. */
@ApiTags('Health')
@Controller('health')
export class HealthController {
  constructor(
    private readonly dataSource: DataSource,
    @Inject(JOB_DISPATCHER) private readonly dispatcher: JobDispatcher,
  ) {}

  @Get('live')
  @Public()
  @ApiOperation({ summary: 'Liveness: the process answers', description: 'Checks no dependency.' })
  @ApiOkResponse({ type: LivenessDto })
  live(): LivenessDto {
    return { status: 'ok' };
  }

  @Get('ready')
  @Public()
  @ApiOperation({
    summary: 'Readiness: the database and Redis answer',
    description: '503 while the database (2 s) or, when configured, Redis (1 s) does not answer in time.',
  })
  @ApiOkResponse({ type: ReadinessDto })
  @ApiServiceUnavailableResponse({ type: ReadinessDto })
  async ready(@Res({ passthrough: true }) res: Response): Promise<ReadinessDto> {
    const [database, redis] = await Promise.all([this.checkDatabase(), this.checkRedis()]);
    const ok = database.status === 'up' && redis.status !== 'down';
    res.status(ok ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE);
    return { status: ok ? 'ok' : 'error', database, redis };
  }

  private async checkDatabase(): Promise<HealthCheckDto> {
    try {
      await withTimeout(this.dataSource.query('SELECT 1'), 2_000, 'database ping');
      return { status: 'up' };
    } catch (err) {
      return { status: 'down', detail: (err as Error).message };
    }
  }

  private async checkRedis(): Promise<HealthCheckDto> {
    if (this.dispatcher.mode === 'in-process')
      return { status: 'not-configured', detail: 'jobs run in-process' };
    const problem = await this.dispatcher.check();
    return problem ? { status: 'down', detail: problem } : { status: 'up' };
  }
}
