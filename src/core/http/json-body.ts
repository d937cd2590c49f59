import type { Express, Response } from 'express';

/**
 * A list page with the deprecated `data` beside `items` (the same array, see
 * `withLegacyFields`): worth serialising by hand, so the items are serialised once.
 */
export function sharesItems(body: unknown): body is { items: unknown[]; data: unknown[] } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const proto = Object.getPrototypeOf(body) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  const page = body as { items?: unknown; data?: unknown; toJSON?: unknown };
  return Array.isArray(page.items) && page.data === page.items && typeof page.toJSON !== 'function';
}

/**
 * `JSON.stringify(body)`, byte for byte, for a plain object whose top-level properties may hold
 * the same value more than once (a list page's `items` and `data`): each distinct value is
 * serialised once and its text reused. Each property is serialised as `JSON.stringify` does it
 * (the same key order, the key passed to `toJSON`, properties whose value serialises to nothing
 * left out). A value with a `toJSON` of its own (given the key) is serialised at each place.
 */
export function stringifySharing(body: object): string {
  const fields = body as Record<string, unknown>;
  if (typeof fields.toJSON === 'function') return JSON.stringify(body);
  const texts = new Map<unknown, string>();
  const members: string[] = [];
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    const name = JSON.stringify(key);
    const shareable =
      typeof value === 'object' &&
      value !== null &&
      typeof (value as { toJSON?: unknown }).toJSON !== 'function';
    let text = shareable ? texts.get(value) : undefined;
    if (text === undefined) {
      // `{ [key]: value }` makes JSON.stringify treat the value exactly as it would in `body`.
      const member = JSON.stringify({ [key]: value });
      if (member === '{}') continue;
      text = member.slice(name.length + 2, -1);
      if (shareable) texts.set(value, text);
    }
    members.push(`${name}:${text}`);
  }
  return `{${members.join(',')}}`;
}

/**
 * Makes `res.json` send list pages that carry their items twice (`items` and the deprecated
 * `data`) with the items serialised once: the same bytes, Content-Type and ETag, for half the
 * serialisation. Every other body goes to Express's own `res.json`, as do all bodies when the app
 * sets `json replacer`, `json spaces` or `json escape`. Installed on this application's response
 * prototype (Nest answers an object with `res.json`), so it costs nothing per request beyond one
 * check of the body, and no interceptor runs on every route for the few that return lists.
 */
export function serialiseListItemsOnce(app: Express): void {
  const response = app.response;
  const json = response.json;
  response.json = function (this: Response, body?: unknown): Response {
    if (!sharesItems(body) || app.get('json replacer') || app.get('json spaces') || app.get('json escape')) {
      return json.call(this, body);
    }
    // What res.json does before res.send; a string sent with it gets `; charset=utf-8` the same way.
    if (!this.get('Content-Type')) this.set('Content-Type', 'application/json');
    return this.send(stringifySharing(body));
  };
}
