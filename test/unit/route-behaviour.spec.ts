import {
  Controller,
  Get,
  Module,
  Patch,
  Post,
  Put,
  UseInterceptors,
  type NestInterceptor,
} from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, MetadataScanner } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import type { Request, Response } from 'express';
import { Audited, isAudited, isMutating } from '../../src/core/audit/audited.decorator.js';
import { AuditInterceptor } from '../../src/core/audit/audit.interceptor.js';
import { AuditModule } from '../../src/core/audit/audit.module.js';
import { AuditService } from '../../src/core/audit/audit.service.js';
import { IdempotencyInterceptor } from '../../src/core/http/idempotency/idempotency.interceptor.js';
import { IdempotencyPrune } from '../../src/core/http/idempotency/idempotency-prune.job.js';
import { IdempotencyRepository } from '../../src/core/http/idempotency/idempotency.repository.js';
import { INTERCEPTORS_METADATA } from '@nestjs/common/constants.js';
import { AppConfig } from '../../src/core/config/app-config.js';
import {
  behaviourOf,
  ErrorShape,
  JsonBodyLimit,
  Multipart,
  RouteBehaviours,
} from '../../src/core/http/route-behaviour.js';

const renderTeapot = (res: Response) => void res.status(418).end();
const renderOwn = (res: Response) => void res.status(400).end();

@ErrorShape(renderTeapot)
@Controller('api/proto/v2')
class ProtocolController {
  @Get('Things/:id')
  read(): void {}

  @Post('Things')
  @ErrorShape(renderOwn)
  create(): void {}
}

@Controller(['build/api/v1/items/:itemId', 'api/v1/items/:itemId'])
class ItemsController {
  @Post('upload')
  @Multipart()
  upload(): void {}

  @Put('manifest')
  @JsonBodyLimit((config) => config.dbtSync.manifestMaxBytes * 2)
  manifest(): void {}

  @Post('small')
  @JsonBodyLimit(2048)
  small(): void {}

  @Get('upload')
  readUpload(): void {}
}

@Module({ imports: [DiscoveryModule], controllers: [ProtocolController, ItemsController] })
class RoutesModule {}

const request = (method: string, path: string) => ({ method, path }) as Request;

describe('RouteBehaviours', () => {
  let behaviours: RouteBehaviours;
  const config = new AppConfig('cli', {});

  beforeAll(async () => {
    const module = await Test.createTestingModule({ imports: [RoutesModule] }).compile();
    behaviours = new RouteBehaviours(module.get(DiscoveryService), module.get(MetadataScanner), config);
  });

  it('gives a request nothing special unless its route declares it', () => {
    const behaviour = behaviours.tag(request('GET', '/api/v1/items/7/upload'));
    expect(behaviour).toEqual({ jsonLimit: null, multipart: false, renderError: null });
    expect(behaviourOf(request('POST', '/api/v1/items/7/upload'))).toEqual(behaviour);
  });

  it('accepts multipart on the declared method and path only, under each controller path', () => {
    expect(behaviours.tag(request('POST', '/build/api/v1/items/7/upload')).multipart).toBe(true);
    expect(behaviours.tag(request('POST', '/api/v1/items/abc/upload/')).multipart).toBe(true);
    expect(behaviours.tag(request('PUT', '/api/v1/items/7/upload')).multipart).toBe(false);
    expect(behaviours.tag(request('POST', '/api/v1/items/7/upload/more')).multipart).toBe(false);
    expect(behaviours.tag(request('POST', '/api/v1/items//upload')).multipart).toBe(false);
  });

  it('reads a JSON body limit as a number or from the configuration', () => {
    expect(behaviours.tag(request('PUT', '/api/v1/items/7/manifest')).jsonLimit).toBe(
      config.dbtSync.manifestMaxBytes * 2,
    );
    expect(behaviours.tag(request('POST', '/api/v1/items/7/small')).jsonLimit).toBe(2048);
    expect(behaviours.tag(request('POST', '/api/v1/items/7/manifest')).jsonLimit).toBeNull();
  });

  it("renders errors in a controller's shape under its whole path, a handler's own shape winning", () => {
    expect(behaviours.tag(request('GET', '/api/proto/v2/Things/1')).renderError).toBe(renderTeapot);
    expect(behaviours.tag(request('DELETE', '/api/proto/v2/Unknown')).renderError).toBe(renderTeapot);
    expect(behaviours.tag(request('GET', '/api/proto/v2')).renderError).toBe(renderTeapot);
    expect(behaviours.tag(request('POST', '/api/proto/v2/Things')).renderError).toBe(renderOwn);
    expect(behaviours.tag(request('GET', '/api/proto/v20')).renderError).toBeNull();
  });

  it('works a request out once and keeps it on the request', () => {
    const req = request('POST', '/api/v1/items/7/upload');
    const first = behaviours.tag(req);
    expect(behaviours.tag(req)).toBe(first);
    expect(behaviourOf(req)).toBe(first);
  });
});

describe('@Audited()', () => {
  class Other implements NestInterceptor {
    intercept(): never {
      throw new Error('not run');
    }
  }

  class Routes {
    @Post()
    @Audited()
    created(): void {}

    @Audited()
    @Put()
    replaced(): void {}

    @Post()
    unaudited(): void {}

    @Get()
    read(): void {}
  }

  it('marks a handler and puts the idempotency, then the audit interceptor first, wherever it stands', () => {
    const proto = Routes.prototype as unknown as Record<string, object>;
    expect(isAudited(proto.created)).toBe(true);
    expect(isAudited(proto.unaudited)).toBe(false);
    expect(isMutating(proto.unaudited)).toBe(true);
    expect(isMutating(proto.read)).toBe(false);

    class Stacked {
      // Applied bottom-up: the other interceptor is there before @Audited() runs.
      @Audited()
      @UseInterceptors(Other)
      @Post()
      above(): void {}
    }
    const interceptors = Reflect.getMetadata(
      INTERCEPTORS_METADATA,
      (Stacked.prototype as unknown as Record<string, object>).above,
    ) as unknown[];
    expect(interceptors).toEqual([IdempotencyInterceptor, AuditInterceptor, Other]);
  });

  it('keeps an application with an unaudited mutating route from starting', async () => {
    @Controller('unaudited')
    class Unaudited {
      @Post()
      @Audited()
      fine(): void {}

      @Patch(':id')
      forgotten(): void {}
    }
    // The interceptor of the audited route is made in this module; what it records with is not used.
    @Module({
      imports: [DiscoveryModule],
      controllers: [Unaudited, ProtocolController],
      providers: [
        { provide: AuditService, useValue: {} },
        { provide: IdempotencyRepository, useValue: {} },
        { provide: IdempotencyPrune, useValue: {} },
      ],
    })
    class Forgetful {}
    const module = await Test.createTestingModule({ imports: [Forgetful] }).compile();
    const start = () => new AuditModule(module.get(DiscoveryService), module.get(MetadataScanner));
    expect(start).toThrow(
      'Mutating routes must be @Audited(); these are not: Unaudited.forgotten, ProtocolController.create',
    );
  });
});
