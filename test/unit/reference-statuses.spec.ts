import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

/**
 * Clients generated from the reference OpenAPI documents (`/work/shared/spec/reference`, outside
 * the repository: reference data, not ours to copy) expect the success statuses it documents,
 * and parse a JSON body where it documents one. The facts this test needs (method, path, success
 * statuses, whether each has a JSON body) are kept in `test/fixtures/reference-success-statuses.json`,
 * which is compared with the documents themselves wherever they are at hand.
 */
const EXTRACT = 'test/fixtures/reference-success-statuses.json';
const REFERENCE_DIR = path.resolve(process.env.REFERENCE_SPEC_DIR ?? '../shared/spec/reference');
const DOCUMENTS = ['platform-api.openapi.yaml', 'scim.openapi.yaml'];
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** A success status's body: JSON, none, or other media types. */
type Body = 'json' | 'none' | 'other';
/** `"<method> <path>"` → success status → body. */
type Statuses = Record<string, Record<string, Body>>;

type Document = {
  servers?: Array<{ url: string }>;
  paths: Record<string, Partial<Record<string, { responses?: Record<string, Response> }>>>;
};
type Response = { content?: Record<string, unknown>; $ref?: string };

const isSuccess = (status: string) => /^[23]\d\d$/.test(status);

function bodyOf(response: Response): Body {
  const types = Object.keys(response.content ?? {});
  if (types.length === 0) return 'none';
  return types.some((t) => /^application\/([\w.-]+\+)?json$/.test(t)) ? 'json' : 'other';
}

/** The success statuses of every operation of a document, under the path of its first server. */
function successStatuses(doc: Document): Statuses {
  // `https://{tenant}.host/api` puts the SCIM paths under `/api`; ours is `/`.
  const server = (doc.servers?.[0]?.url ?? '/').replace(/\{[^}]+\}/g, 'x');
  const base = new URL(server, 'https://host/').pathname;
  const out: Statuses = {};
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const statuses = Object.entries(op.responses ?? {}).filter(([s]) => isSuccess(s));
      out[`${method} ${base.replace(/\/$/, '')}${p}`] = Object.fromEntries(
        statuses.map(([s, r]) => [s, bodyOf(r)]),
      );
    }
  }
  return out;
}

/** Path parameters by position, not name (`{id}` and `{roleId}` are the same); no trailing slash. */
const normalise = (key: string) => key.replace(/\{[^}]+\}/g, '{}').replace(/(.)\/$/, '$1');

function byNormalisedKey(statuses: Statuses): Map<string, { key: string; statuses: Record<string, Body> }> {
  return new Map(Object.entries(statuses).map(([key, s]) => [normalise(key), { key, statuses: s }]));
}

/**
 * Where our specification (`/work/shared/spec/platform-api.md`) states a status the reference does
 * not document, ours follows the spec. Each entry cites the spec's line.
 *
 * None today: the spec's explicit 204s (`DELETE /embed-tenants/{embedTenantName}` "Returns 204",
 * "Deleting a group returns 204", platform-api.md lines 308 and 311) are among the statuses the
 * reference documents for those operations (200 or 204), so they need no exception.
 */
const SPEC_EXCEPTIONS: ReadonlyMap<string, string> = new Map<string, string>([]);

/**
 * The reference operations this service does not serve, on purpose; the README lists the same
 * ("Reference operations not served, on purpose").
 */
const NOT_SERVED: ReadonlyMap<string, string> = new Map([
  ...[
    'get /api/v1/deployments/{deploymentId}/databricks-metric-view-integrations/{dataSourceName}',
    'put /api/v1/deployments/{deploymentId}/databricks-metric-view-integrations/{dataSourceName}',
    'post /api/v1/deployments/{deploymentId}/databricks-metric-view-previews',
    'get /api/v1/deployments/{deploymentId}/databricks-metric-view-previews/{previewId}',
    'delete /api/v1/deployments/{deploymentId}/databricks-metric-view-previews/{previewId}',
    'get /api/v1/deployments/{deploymentId}/databricks-metric-view-previews/{previewId}/result',
  ].map((op) => [op, 'serves one warehouse vendor and needs its API'] as const),
  [
    'post /api/v1/deployments/{deploymentId}/workbooks/{workbookId}/dashboard/ai-widget-thread',
    'removed by our specification (platform-api.md, "the published-dashboard AI widget thread operation was removed")',
  ],
]);

describe('the operations served', () => {
  const reference = JSON.parse(fs.readFileSync(EXTRACT, 'utf8')) as Statuses;
  const ours = byNormalisedKey(
    successStatuses(JSON.parse(fs.readFileSync('openapi/openapi.json', 'utf8')) as Document),
  );

  it('include every reference operation but the ones not served on purpose', () => {
    const missing = Object.keys(reference).filter((key) => !ours.has(normalise(key)));
    expect(missing.sort()).toEqual([...NOT_SERVED.keys()].sort());
  });

  it('are listed in the README where they are not served', () => {
    const readme = fs.readFileSync('README.md', 'utf8').replace(/\s+/g, ' ');
    const section = readme.slice(readme.indexOf('Reference operations not served, on purpose'));
    for (const key of NOT_SERVED.keys()) {
      const [method, route] = key.split(' ');
      const line = section.split(/ - /).find((l) => l.includes(`${route}\``)) ?? '';
      expect({ key, listed: line.includes(method.toUpperCase()) }).toEqual({ key, listed: true });
    }
  });
});

describe('success statuses where the reference documents the operation', () => {
  const reference = JSON.parse(fs.readFileSync(EXTRACT, 'utf8')) as Statuses;
  const ours = successStatuses(JSON.parse(fs.readFileSync('openapi/openapi.json', 'utf8')) as Document);

  it('keeps the extract equal to the reference documents (when they are at hand)', () => {
    const present = DOCUMENTS.every((f) => fs.existsSync(path.join(REFERENCE_DIR, f)));
    if (!present) {
      // A clone without the reference documents checks against the committed extract alone.
      console.warn(`Reference documents not found under ${REFERENCE_DIR}: comparing with ${EXTRACT} only`);
      return;
    }
    const fromDocuments: Statuses = {};
    for (const f of DOCUMENTS) {
      Object.assign(
        fromDocuments,
        successStatuses(parse(fs.readFileSync(path.join(REFERENCE_DIR, f), 'utf8')) as Document),
      );
    }
    const sorted = Object.fromEntries(Object.entries(fromDocuments).sort(([a], [b]) => a.localeCompare(b)));
    if (process.env.UPDATE_REFERENCE_EXTRACT === '1')
      fs.writeFileSync(EXTRACT, `${JSON.stringify(sorted, null, 2)}\n`);
    expect(reference).toEqual(sorted);
  });

  it('answers a status the reference documents, with a JSON body where the reference has one', () => {
    const theirs = byNormalisedKey(reference);
    const compared: string[] = [];
    const wrong: unknown[] = [];
    for (const [normalised, { key, statuses }] of byNormalisedKey(ours)) {
      const ref = theirs.get(normalised);
      if (!ref || SPEC_EXCEPTIONS.has(normalised)) continue;
      compared.push(key);
      const documented = Object.keys(ref.statuses);
      // 304 answers only a client's own If-None-Match (RFC 9110 §15.4.5; docs/api-conventions.md,
      // "Conditional requests"): a client that does not send one never sees it.
      const answered = Object.keys(statuses).filter((s) => s !== '304');
      const jsonMissing = answered.filter((s) => ref.statuses[s] === 'json' && statuses[s] !== 'json');
      if (
        answered.length === 0 ||
        answered.some((s) => !documented.includes(s)) ||
        // A single documented status is the one to answer.
        (documented.length === 1 && answered[0] !== documented[0]) ||
        jsonMissing.length > 0
      )
        wrong.push({ operation: key, ours: statuses, reference: ref.statuses });
    }
    expect(wrong).toEqual([]);
    // Both documents describe most of the API: a broken match would compare nothing.
    expect(compared.length).toBeGreaterThan(140);
  });

  it('lists only exceptions for operations both documents have', () => {
    const theirs = byNormalisedKey(reference);
    const mine = byNormalisedKey(ours);
    expect([...SPEC_EXCEPTIONS.keys()].filter((k) => !theirs.has(k) || !mine.has(k))).toEqual([]);
  });

  it('answers 200 {"success": true} for the deletes the reference documents with a JSON body only', () => {
    const doc = JSON.parse(fs.readFileSync('openapi/openapi.json', 'utf8')) as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: unknown }> }>>;
    };
    for (const p of [
      '/api/v1/deployments/{deploymentId}/folders/{folderId}',
      '/api/v1/deployments/{deploymentId}/workbooks/{workbookId}',
      '/api/v1/deployments/{deploymentId}/reports/{reportId}',
      '/api/v1/oauth-integrations/{id}',
      '/api/v1/oidc-token-configs/{id}',
      '/api/v1/user-oauth-tokens/{integrationId}',
      '/api/v1/users/{id}',
    ]) {
      const responses = doc.paths[p].delete.responses;
      expect({
        p,
        statuses: Object.keys(responses).filter(isSuccess),
        body: responses['200']?.content,
      }).toEqual({
        p,
        statuses: ['200'],
        body: { 'application/json': { schema: { $ref: '#/components/schemas/SuccessResponseDto' } } },
      });
    }
  });
});
