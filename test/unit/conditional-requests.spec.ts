import { Controller, Delete, Get, Patch, Put, Query } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import {
  EmbedOrPlatformToken,
  EmbedTokenRequired,
  Public,
  RequireActions,
  RequireObjectAction,
} from '../../src/core/auth/access.decorators.js';
import { Action } from '../../src/core/auth/action.js';
import { resourceKey } from '../../src/core/http/conditional/conditional-requests.js';
import { ConditionalRoutes } from '../../src/core/http/conditional/conditional-routes.js';
import {
  ifMatchHolds,
  ifNoneMatchHolds,
  parseEntityTag,
  parseTagCondition,
} from '../../src/core/http/conditional/entity-tags.js';
import { advisoryKey, InProcessResourceLocks } from '../../src/core/http/conditional/resource-locks.js';

describe('entity tag conditions (RFC 9110)', () => {
  it('reads *, one tag, and lists of strong and weak tags', () => {
    expect(parseTagCondition('*')).toBe('*');
    expect(parseTagCondition(' * ')).toBe('*');
    expect(parseTagCondition('"a"')).toEqual([{ weak: false, opaque: '"a"' }]);
    expect(parseTagCondition('W/"a", "b,c" ,, ""')).toEqual([
      { weak: true, opaque: '"a"' },
      { weak: false, opaque: '"b,c"' },
      { weak: false, opaque: '""' },
    ]);
    // Several header lines, as Node joins them.
    expect(parseTagCondition(['"a"', '"b"'])).toEqual([
      { weak: false, opaque: '"a"' },
      { weak: false, opaque: '"b"' },
    ]);
  });

  it.each([
    ['an unquoted tag', 'abc'],
    ['an unterminated tag', '"abc'],
    ['* in a list', '*, "a"'],
    ['a lower-case weak prefix', 'w/"a"'],
    ['text after a tag', '"a" b'],
    ['a space inside a tag', '"a b"'],
    ['a control character', '"a\u0001"'],
    ['no tag at all', ' , '],
    ['an empty value', ''],
  ])('refuses %s', (_what, value) => {
    expect(parseTagCondition(value)).toBeNull();
  });

  it('compares If-Match strongly and If-None-Match weakly', () => {
    const strong = parseEntityTag('"x"');
    const weak = parseEntityTag('W/"x"');
    expect(ifMatchHolds('*', strong)).toBe(true);
    expect(ifMatchHolds([{ weak: false, opaque: '"x"' }], strong)).toBe(true);
    expect(ifMatchHolds([{ weak: true, opaque: '"x"' }], strong)).toBe(false);
    expect(ifMatchHolds([{ weak: false, opaque: '"x"' }], weak)).toBe(false);
    expect(ifMatchHolds([{ weak: false, opaque: '"y"' }], strong)).toBe(false);
    expect(ifMatchHolds([{ weak: false, opaque: '"x"' }], null)).toBe(false);
    expect(ifNoneMatchHolds('*', strong)).toBe(false);
    expect(ifNoneMatchHolds([{ weak: true, opaque: '"x"' }], strong)).toBe(false);
    expect(ifNoneMatchHolds([{ weak: false, opaque: '"y"' }], strong)).toBe(true);
    expect(ifNoneMatchHolds([{ weak: false, opaque: '"y"' }], null)).toBe(true);
    expect(parseEntityTag('"a", "b"')).toBeNull();
    expect(parseEntityTag(undefined)).toBeNull();
  });
});

describe('resource lock keys', () => {
  it('are one key for every spelling of one path', () => {
    expect(resourceKey('/api/v1/embed-tenants/Acme%20Co/groups/5/')).toBe(
      'api/v1/embed-tenants/acme co/groups/5',
    );
    expect(resourceKey('/API/v1/embed-tenants/acme co/groups/5')).toBe(
      'api/v1/embed-tenants/acme co/groups/5',
    );
    expect(resourceKey('/api/v1/x/%E0%A4%A')).toBe('api/v1/x/%e0%a4%a');
    expect(advisoryKey('a')).toBe(advisoryKey('a'));
    expect(advisoryKey('a')).not.toBe(advisoryKey('b'));
    expect(typeof advisoryKey('a')).toBe('bigint');
  });
});

describe('in-process resource locks', () => {
  it('serve one holder at a time, first come first served, and give up after the wait', async () => {
    const locks = new InProcessResourceLocks();
    const first = await locks.acquire('r', 1_000);
    expect(first).not.toBeNull();
    const order: string[] = [];
    const second = locks.acquire('r', 5_000).then((held) => {
      order.push('second');
      return held;
    });
    const third = locks.acquire('r', 5_000).then((held) => {
      order.push('third');
      return held;
    });
    // Another resource is not held up.
    const other = await locks.acquire('other', 1_000);
    expect(other).not.toBeNull();
    expect(order).toEqual([]);
    // The wait runs out while the first holder keeps it.
    expect(await locks.acquire('r', 10)).toBeNull();
    await first!.release();
    await first!.release();
    const secondHeld = await second;
    expect(order).toEqual(['second']);
    await secondHeld!.release();
    const thirdHeld = await third;
    expect(order).toEqual(['second', 'third']);
    await thirdHeld!.release();
    await other!.release();
    const again = await locks.acquire('r', 10);
    expect(again).not.toBeNull();
    await again!.release();
  });
});

class PageQuery {
  first?: number;
}

@Controller('api/v1/things')
@RequireActions(Action.All)
class ThingsController {
  @Get()
  list(@Query('first') _first?: string): void {}

  @Get('me')
  me(): void {}

  @Get(':id')
  one(): void {}

  @Put(':id')
  replace(): void {}

  @Delete(':id')
  remove(): void {}

  @Put(':id/parts')
  replaceParts(): void {}

  @Get(':id/parts')
  parts(@Query() _page: PageQuery): void {}

  @Patch(':id/shown')
  @RequireObjectAction(Action.ReportEdit, { basicAuth: true })
  show(): void {}

  @Get(':id/shown')
  @RequireObjectAction(Action.ReportRead)
  shown(): void {}
}

@Controller('api/v1/boards/:publicId')
class BoardsController {
  @Get()
  @EmbedTokenRequired()
  read(): void {}

  @Patch()
  @RequireActions(Action.All)
  change(): void {}

  @Get('notes')
  @EmbedOrPlatformToken()
  notes(): void {}

  @Put('notes')
  @RequireActions(Action.All)
  replaceNotes(): void {}

  @Get('public')
  @Public()
  open(): void {}

  @Delete('public')
  @RequireActions(Action.All)
  close(): void {}
}

describe('the GET a conditional write is evaluated with', () => {
  let routes: ConditionalRoutes;

  beforeAll(async () => {
    const module = await Test.createTestingModule({
      controllers: [ThingsController, BoardsController],
    }).compile();
    routes = new ConditionalRoutes(module.get(ModulesContainer));
  });

  const readOf = (method: string, path: string) => routes.target(method, path)?.read?.declared ?? null;

  it('is the GET of the same path, whatever the case or a trailing slash', () => {
    expect(readOf('PUT', '/api/v1/things/7')).toBe('/api/v1/things/:id');
    expect(readOf('DELETE', '/API/v1/Things/7/')).toBe('/api/v1/things/:id');
    expect(routes.target('PUT', '/api/v1/things/7')?.write.declared).toBe('/api/v1/things/:id');
  });

  it('is none for a page of a list, a GET Express routes elsewhere, or no route at all', () => {
    // A list's GET takes first/after: its tag would not cover the rest of the list.
    expect(readOf('PUT', '/api/v1/things/7/parts')).toBeNull();
    expect(routes.target('PUT', '/api/v1/things/7/parts')).not.toBeNull();
    // GET /things/me is another route than the one PUT /things/:id reaches.
    expect(readOf('PUT', '/api/v1/things/me')).toBeNull();
    expect(routes.target('PATCH', '/api/v1/things/7')).toBeNull();
    expect(routes.target('PUT', '/api/v1/nothing/7')).toBeNull();
  });

  it('takes every credential the write takes', () => {
    // An embed-token read cannot be made with the writer's Platform API token.
    expect(readOf('PATCH', '/api/v1/boards/abc')).toBeNull();
    expect(readOf('PUT', '/api/v1/boards/abc/notes')).toBe('/api/v1/boards/:publicId/notes');
    expect(readOf('DELETE', '/api/v1/boards/abc/public')).toBe('/api/v1/boards/:publicId/public');
    // The write takes HTTP Basic too, its read does not.
    expect(readOf('PATCH', '/api/v1/things/7/shown')).toBeNull();
  });

  it('lists every write route with its read', () => {
    const listed = routes
      .writes()
      .map(({ write, read }) => `${write.method} ${write.declared} -> ${read?.declared ?? '-'}`)
      .sort();
    expect(listed).toEqual([
      'DELETE /api/v1/boards/:publicId/public -> /api/v1/boards/:publicId/public',
      'DELETE /api/v1/things/:id -> /api/v1/things/:id',
      'PATCH /api/v1/boards/:publicId -> -',
      'PATCH /api/v1/things/:id/shown -> -',
      'PUT /api/v1/boards/:publicId/notes -> /api/v1/boards/:publicId/notes',
      'PUT /api/v1/things/:id -> /api/v1/things/:id',
      'PUT /api/v1/things/:id/parts -> -',
    ]);
  });
});
