import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { JobContext } from './job-context.js';
import { DeclaredJobs, JOB_HANDLER_METADATA, type JobDefinition } from './job-definition.js';

export type HandlerFn = (payload: Record<string, unknown>, ctx: JobContext) => Promise<void>;

export interface RegisteredJob {
  readonly definition: JobDefinition;
  readonly handler: HandlerFn;
  /** `Class.method`, for messages. */
  readonly where: string;
}

/**
 * The jobs of this application, found at start-up: the definitions modules declare
 * (`declareJobs`) and the methods marked `@JobHandler`. Start-up fails when a declared job has no
 * handler or two, when a handler's job is not declared, or when two definitions share a name.
 */
@Injectable()
export class JobRegistry implements OnModuleInit {
  private readonly jobs = new Map<string, RegisteredJob>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
  ) {}

  onModuleInit(): void {
    const declared = new Map<string, JobDefinition>();
    const handlers = new Map<
      string,
      Array<{ definition: JobDefinition; handler: HandlerFn; where: string }>
    >();
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      if (!instance || typeof instance !== 'object') continue;
      if (instance instanceof DeclaredJobs) {
        for (const job of instance.jobs as readonly JobDefinition[]) {
          const other = declared.get(job.name);
          if (other && other !== job)
            throw new Error(`Job ${job.name} is declared twice (two defineJob calls)`);
          declared.set(job.name, job);
        }
        continue;
      }
      const prototype = Object.getPrototypeOf(instance) as object | null;
      if (!prototype || wrapper.isNotMetatype) continue;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const fn = (instance as Record<string, unknown>)[method];
        if (typeof fn !== 'function') continue;
        const definition = Reflect.getMetadata(JOB_HANDLER_METADATA, fn) as JobDefinition | undefined;
        if (!definition) continue;
        const list = handlers.get(definition.name) ?? [];
        list.push({
          definition,
          handler: (fn as HandlerFn).bind(instance),
          where: `${instance.constructor.name}.${method}`,
        });
        handlers.set(definition.name, list);
      }
    }
    const problems: string[] = [];
    for (const [name, definition] of declared) {
      const found = handlers.get(name) ?? [];
      if (found.length === 0) problems.push(`job ${name} is declared but no @JobHandler handles it`);
      else if (found.length > 1)
        problems.push(`job ${name} has ${found.length} handlers: ${found.map((h) => h.where).join(', ')}`);
      else this.jobs.set(name, { ...found[0], definition });
    }
    for (const [name, found] of handlers) {
      if (!declared.has(name))
        problems.push(`@JobHandler ${found[0].where} handles job ${name}, which no module declares`);
    }
    if (problems.length > 0) throw new Error(`Invalid jobs:\n  ${problems.join('\n  ')}`);
  }

  /** The registered job; throws for a name this application does not declare. */
  get(name: string): RegisteredJob {
    const job = this.jobs.get(name);
    if (!job) throw new Error(`Job ${name} is not declared in this application`);
    return job;
  }

  find(name: string): RegisteredJob | undefined {
    return this.jobs.get(name);
  }

  all(): RegisteredJob[] {
    return [...this.jobs.values()];
  }
}
