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
import { describeStall, QueueWatch } from '../queue/queue-consumers.js';
import { withTimeout } from '../timeout.js';

class HealthCheckDto {
  @ApiProperty({ enum: ['up', 'down', 'not-configured'] }) status: string;
  @ApiProperty({ required: false }) detail?: string;
}

class StalledQueueDto {
  @ApiProperty({ example: 'builds' }) queue: string;
  @ApiProperty({ description: 'Jobs of the queue waiting longer than QUEUE_STALL_SECONDS' }) jobs: number;
  @ApiProperty({ description: 'How long the oldest of them has waited, seconds' }) waitingSeconds: number;
}

class QueuesCheckDto {
  @ApiProperty({ enum: ['down'] }) status: 'down';
  @ApiProperty({ description: 'Names each stalled queue and what to do' }) detail: string;
  @ApiProperty({ type: [StalledQueueDto] }) stalled: StalledQueueDto[];
}

class ReadinessDto {
  @ApiProperty({ enum: ['ok', 'error'] }) status: 'ok' | 'error';
  @ApiProperty({ type: HealthCheckDto }) database: HealthCheckDto;
  @ApiProperty({ type: HealthCheckDto }) redis: HealthCheckDto;
  @ApiProperty({
    type: QueuesCheckDto,
    required: false,
    description:
      'Only when a queue has jobs waiting longer than QUEUE_STALL_SECONDS and no live worker consuming it ' +
      '(none heard from within JOB_LEASE_SECONDS); never without REDIS_URL (this process runs every job)',
  })
  queues?: QueuesCheckDto;
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
    private readonly watch: QueueWatch,
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
    summary: 'Readiness: the database and Redis answer, and no queue waits without a worker',
    description:
      '503 while the database (2 s) or, when configured, Redis (1 s) does not answer in time, or while a ' +
      'queue has jobs waiting longer than QUEUE_STALL_SECONDS with no live worker consuming it (`queues` ' +
      'names it).',
  })
  @ApiOkResponse({ type: ReadinessDto })
  @ApiServiceUnavailableResponse({ type: ReadinessDto })
  async ready(@Res({ passthrough: true }) res: Response): Promise<ReadinessDto> {
    const [database, redis, queues] = await Promise.all([
      this.checkDatabase(),
      this.checkRedis(),
      this.checkQueues(),
    ]);
    const ok = database.status === 'up' && redis.status !== 'down' && !queues;
    res.status(ok ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE);
    return { status: ok ? 'ok' : 'error', database, redis, ...(queues ? { queues } : {}) };
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

  /**
   * The queues whose jobs wait past QUEUE_STALL_SECONDS with no live consumer; undefined when
   * none do, or when that cannot be read (the database check then says why).
   */
  private async checkQueues(): Promise<QueuesCheckDto | undefined> {
    if (!this.watch.watching) return undefined;
    const stalled = await withTimeout(this.watch.check(), 2_000, 'stalled queues').catch(() => []);
    if (stalled.length === 0) return undefined;
    return { status: 'down', detail: stalled.map(describeStall).join('; '), stalled };
  }
}
