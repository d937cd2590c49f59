import fs from 'node:fs';
import path from 'node:path';

/**
 * Every API route the pages of `docs/` cite in code (`/api/v1/users/{id}`, `PUT /api/v1/groups/4/users/9`,
 * or relative to a base, `/reports/{reportId}/refresh` under `/api/v1/deployments/{deploymentId}`)
 * is a route of the committed OpenAPI document. A parameter is written `{name}`, `<name>` or as a
 * number; a path ending in `/`, `/...` or `…`, or a base (`/api/scim/v2`), names a prefix. A relative path is checked only when
 * its first segment is the first segment of some route under a base (so `/usr/bin`, the data
 * API's `/cubejs-api/v1/load` or SCIM's unsupported `/Me` are not taken for our routes).
 */
const doc = JSON.parse(fs.readFileSync('openapi/openapi.json', 'utf8')) as { paths: Record<string, unknown> };
const ROUTES = Object.keys(doc.paths).map(segments);
const BASES = [
  '/api/v1/deployments/{deploymentId}',
  '/build/api/v1/deployments/{deploymentId}',
  '/api/v1',
  '/build/api/v1',
  '/api/scim/v2',
].map(segments);
const ABSOLUTE = /^\/(api|build\/api|health)\//;

function segments(p: string): string[] {
  return p.split('/').filter(Boolean);
}

const isParam = (segment: string) => /^(\{[^}]*\}|<[^>]*>|\d+)$/.test(segment);

/** A cited segment matches a route's parameter, or its literal exactly. */
function matches(cited: string[], route: string[], prefix: boolean): boolean {
  if (prefix ? cited.length > route.length : cited.length !== route.length) return false;
  return cited.every((s, i) => /^\{[^}]*\}$/.test(route[i]) || (!isParam(s) && s === route[i]));
}

const ROOTS = new Set(
  ROUTES.flatMap((route) =>
    BASES.filter((base) => matches(base, route, true) && route.length > base.length).map(
      (base) => route[base.length],
    ),
  ),
);

/** The paths a code span or code block line cites: absolute ones, and relative ones under a base. */
function cited(code: string): string[] {
  const out: string[] = [];
  for (const m of code.matchAll(/(?:^|[\s(])(\/[^\s`'"()[\],;]*)/g)) {
    // A sentence's full stop or colon is not part of the path; an ellipsis is.
    const p = m[1].replace(/[?#].*$/, '').replace(/(?<!\.)[.:]$/, '');
    if (ABSOLUTE.test(p) || ROOTS.has(segments(p)[0] ?? '')) out.push(p);
  }
  return out;
}

function known(p: string): boolean {
  const prefix = /(\/|\/\.\.\.|…)$/.test(p);
  const parts = segments(p.replace(/(\/\.\.\.|…)$/, ''));
  // A base itself (`/api/scim/v2`) names where routes are.
  if (ABSOLUTE.test(p)) return [...ROUTES, ...BASES].some((route) => matches(parts, route, prefix));
  return BASES.some((base) => ROUTES.some((route) => matches([...base, ...parts], route, prefix)));
}

describe('routes cited by docs/*.md', () => {
  const pages = fs.readdirSync('docs').filter((f) => f.endsWith('.md'));

  it('are routes of the OpenAPI document', () => {
    const unknown: string[] = [];
    let checked = 0;
    for (const page of pages) {
      const text = fs.readFileSync(path.join('docs', page), 'utf8');
      const blocks = [...text.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].map((m) => m[1]);
      const spans = [...text.replace(/^```[\s\S]*?^```/gm, '').matchAll(/`([^`\n]+)`/g)].map((m) => m[1]);
      for (const code of [...spans, ...blocks.flatMap((b) => b.split('\n'))]) {
        for (const p of cited(code)) {
          checked += 1;
          if (!known(p)) unknown.push(`${page}: ${p}`);
        }
      }
    }
    expect(unknown).toEqual([]);
    expect(checked).toBeGreaterThan(200);
  });

  it('tells a route from a path that is not one', () => {
    expect(known('/api/v1/deployments/3/reports/5/connect-workbook')).toBe(true);
    expect(known('/api/v1/deployments/3/reports/5/connect')).toBe(false);
    expect(known('/reports/{reportId}/refresh')).toBe(true);
    expect(known('/reports/{reportId}/refreshes')).toBe(false);
    expect(known('/api/v1/users/{id}')).toBe(true);
    // A parameter does not stand for a literal segment of the route.
    expect(known('/api/v1/users/{id}/policies/{x}')).toBe(false);
    expect(known('/build/api/v1/deployments/{deploymentId}/')).toBe(true);
    expect(cited('see /usr/bin/chromium and /cubejs-api/v1/load')).toEqual([]);
  });
});

/** Every place that seals a secret, and the words the Secrets section of docs/configuration.md names it with. */
const SEALED: Record<string, string> = {
  'src/core/auth/embed-tokens.service.ts': 'embed signing key',
  'src/modules/oauth/oauth-integrations.service.ts': 'OAuth client secrets',
  'src/modules/oauth/user-oauth-tokens.service.ts': 'OAuth access and refresh tokens',
  'src/modules/oauth/oauth-flow.service.ts': 'PKCE code verifiers',
  'src/modules/dbt-sync/dbt-integrations.service.ts': 'dbt repository credentials',
  'src/modules/deployments/env-vars.service.ts': 'environment variable values',
  'src/modules/data-api-tokens/data-api-tokens.service.ts': 'issued data API tokens',
  'src/core/http/idempotency/idempotency.repository.ts': 'answers kept for Idempotency-Key retries',
  'src/modules/webhooks/webhook-secrets.ts': 'webhook signing secrets',
};

describe('the secrets docs/configuration.md says are sealed', () => {
  const text = fs.readFileSync('docs/configuration.md', 'utf8');
  const section = (/^## Secrets\n([\s\S]*?)^## /m.exec(text)?.[1] ?? '').replace(/\s+/g, ' ');

  it('are those the sources seal, each named, none promised for later', () => {
    const sealing = fs
      .readdirSync('src', { recursive: true, encoding: 'utf8' })
      .map((f) => path.join('src', f))
      .filter((f) => f.endsWith('.ts') && !f.startsWith(path.join('src', 'core', 'crypto')))
      .filter((f) => /\.seal\(/.test(fs.readFileSync(f, 'utf8')))
      .sort();
    expect(sealing).toEqual(Object.keys(SEALED).sort());
    expect(section).toContain('sealed at rest');
    for (const words of Object.values(SEALED))
      expect({ words, named: section.includes(words) }).toEqual({ words, named: true });
    expect(section).not.toMatch(/\blater\b|\bwill be\b/);
  });
});
