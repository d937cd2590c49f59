import express from 'express';
import request from 'supertest';
import { serialiseListItemsOnce, sharesItems, stringifySharing } from '../../src/core/http/json-body.js';
import { buildPage, withLegacyFields, type Paging } from '../../src/core/http/pagination.js';

const paging: Paging = { mode: 'cursor', first: 2, after: null };

function legacyPage<T>(items: T[], total = items.length) {
  return withLegacyFields(
    buildPage(items, paging, () => [0]),
    paging,
    total,
  );
}

/** An item that counts how often JSON.stringify serialises it. */
class Counted {
  static calls = 0;
  constructor(readonly id: number) {}
  toJSON(): unknown {
    Counted.calls++;
    return { id: this.id, name: `r${this.id}` };
  }
}

describe('stringifySharing', () => {
  it('writes what JSON.stringify writes for a legacy page, serialising the items once', () => {
    Counted.calls = 0;
    const page = legacyPage([new Counted(1), new Counted(2), new Counted(3)], 3);
    expect(sharesItems(page)).toBe(true);
    const text = stringifySharing(page);
    expect(Counted.calls).toBe(page.items.length);
    expect(text).toBe(JSON.stringify(page));
    expect(Object.keys(JSON.parse(text))).toEqual(['items', 'pageInfo', 'data', 'count', 'pagination']);
  });

  it.each([
    ['dates, nested objects and odd strings', { items: [{ at: new Date(0), s: '"\u2028</\u0000é' }] }],
    ['an empty page', { items: [] }],
    [
      'undefined, function and symbol values left out',
      { items: [1], a: undefined, f: () => 1, s: Symbol('x') },
    ],
    ['a key that needs escaping', { items: [1], 'k"\n': 2, __proto__x: null }],
    ['integer-like keys first', { items: [1], b: 1, 2: 'two', 1: 'one' }],
    ['a shared value with a toJSON of its own', { items: [1], x: { toJSON: (k: string) => k } }],
  ])('matches JSON.stringify with %s', (_name, fields) => {
    const body: Record<string, unknown> = { ...fields };
    body.data = body.items;
    if ('x' in body) body.y = body.x;
    expect(stringifySharing(body)).toBe(JSON.stringify(body));
  });

  it('matches JSON.stringify for a body with a toJSON', () => {
    const items = [1];
    const body = { items, data: items, toJSON: () => ({ other: true }) };
    expect(sharesItems(body)).toBe(false);
    expect(stringifySharing(body)).toBe(JSON.stringify(body));
  });

  it('recognises only plain objects whose data is their items', () => {
    const items = [1];
    expect(sharesItems({ items, data: [...items] })).toBe(false);
    expect(sharesItems({ items })).toBe(false);
    expect(sharesItems([items])).toBe(false);
    expect(sharesItems('text')).toBe(false);
    expect(sharesItems(null)).toBe(false);
    expect(sharesItems(Object.assign(new (class Page {})(), { items, data: items }))).toBe(false);
    expect(sharesItems(Object.assign(Object.create(null) as object, { items, data: items }))).toBe(true);
  });
});

describe('serialiseListItemsOnce', () => {
  function appWith(body: unknown, settings: Record<string, unknown> = {}, contentType?: string) {
    const app = express();
    for (const [name, value] of Object.entries(settings)) app.set(name, value);
    serialiseListItemsOnce(app);
    app.get('/', (_req, res) => {
      if (contentType) res.set('Content-Type', contentType);
      res.json(body);
    });
    // The reference: the text of JSON.stringify, sent as Express sends any JSON text.
    app.get('/reference', (_req, res) => {
      res.type('json').send(JSON.stringify(body));
    });
    return Object.assign(request(app).get('/'), { reference: () => request(app).get('/reference') });
  }

  it('answers a legacy page with the bytes, type and ETag of JSON.stringify', async () => {
    Counted.calls = 0;
    const page = legacyPage([new Counted(1), new Counted(2)]);
    const call = appWith(page);
    const res = await call;
    expect(Counted.calls).toBe(2);
    const reference = await call.reference();
    expect(res.text).toBe(reference.text);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers.etag).toBe(reference.headers.etag);
    expect(res.headers['content-length']).toBe(reference.headers['content-length']);
  });

  it('keeps a Content-Type set before', async () => {
    const res = await appWith(legacyPage([{ id: 1 }]), {}, 'application/scim+json');
    expect(res.headers['content-type']).toBe('application/scim+json; charset=utf-8');
  });

  it('leaves other bodies, and every body when the app sets JSON options, to Express', async () => {
    Counted.calls = 0;
    const other = { items: [new Counted(1)], data: [new Counted(1)] };
    expect((await appWith(other)).text).toBe(JSON.stringify(other));
    expect(Counted.calls).toBe(4);
    const page = legacyPage([{ id: 1 }]);
    expect((await appWith(page, { 'json spaces': 2 })).text).toBe(JSON.stringify(page, null, 2));
    expect((await appWith(page, { 'json escape': true })).text).toBe(JSON.stringify(page));
  });
});
