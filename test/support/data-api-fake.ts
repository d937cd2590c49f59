import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { jwtVerify } from 'jose';

/**
 * A loopback stand-in for a deployment's Core Data API (Cube's REST API), the subset the data API
 * client uses, with Cube's wire formats:
 *
 * - `POST /cubejs-api/v1/load` with `{"query": {...}}`: `{query, data: [rows], annotation,
 *   lastRefreshTime, ...}`; a handler that throws answers 400 `{"error": message}`, as Cube does
 *   for a query it refuses;
 * - `POST /cubejs-api/v1/cubesql` with `{"query": "SELECT ..."}`: newline-delimited JSON, a
 *   `{"schema": [{name, column_type}], "lastRefreshTime"}` line and then `{"data": [[...]]}` lines
 *   (`sqlChunkRows` rows each), written as separate chunks; a handler that throws answers 200
 *   with an `{"error": message}` line, as Cube's SQL API does;
 * - `GET /cubejs-api/v1/meta`: `{"cubes": [...]}`;
 * - every route checks the API token as Cube does: a JWT (HS256) signed with `secret`, sent in
 *   `Authorization` with no prefix, its claims being the security context; a missing, invalid or
 *   `Bearer `-prefixed token answers 403 `{"error": ...}` (Cube answers 403 to a bad token; this
 *   fake is stricter than Cube about the prefix, which Cube tolerates, since the API reference
 *   says there is none).
 *
 * The same fake serves every deployment: `env()` points `DATA_API_URL_TEMPLATE` at
 * `<url>/deployments/{deploymentId}`, and each recorded request says which deployment it was for.
 * That address is the production environment. A staging or development environment is served at
 * `<url>/deployments/{deploymentId}/dev-mode/<branch>/cubejs-api/v1/...` once `serveEnvironment`
 * names its id, and checks tokens with that environment's secret, as docs/querying.md gives it:
 * hex HMAC-SHA256 of `environment:<id>` keyed with `secret` (written here from the document, not
 * imported, so the two are checked against each other). A token carrying a `scopes` claim is
 * refused a route outside them (`403 API scope is missing: <scope>`, Cube's answer), as a Cube whose
 * `contextToApiScopes` reads the claim.
 *
 * ```ts
 * const fake = await startDataApiFake({ secret: 'a'.repeat(32) });
 * const t = await startServiceApp(fake.env());
 * // ... give the deployment CUBEJS_API_SECRET = fake.secret (EnvVarsService.set)
 * fake.onLoad((query, ctx) => [{ 'Orders.count': '3' }]);
 * fake.onSql((sql, ctx) => ({ columns: ['n'], rows: [{ n: 1 }] }));
 * fake.continueWait(2); // the next two queries answer `Continue wait`
 * fake.failWith(500, 'boom'); fake.delay(5_000); fake.hang(); fake.reset();
 * expect(fake.requests[0].securityContext).toEqual({ userId: 7 });
 * await fake.close();
 * ```
 */

export interface DataApiFakeRequest {
  method: string;
  /** The path below the deployment prefix: `/cubejs-api/v1/load`, `.../cubesql`, `.../meta`. */
  path: string;
  /** The `{deploymentId}` of the address, when the request came through `env()`'s template. */
  deploymentId: number | null;
  /** The branch of a `/dev-mode/<branch>` address; null for production. */
  branch: string | null;
  /** The `Authorization` header as sent. */
  authorization: string | undefined;
  /** Whether the token verified, or why not (`unknown`: a dev-mode address no environment serves). */
  auth: 'ok' | 'missing' | 'bearer' | 'invalid' | 'unknown';
  /** The verified claims without `iat`, `exp` and `scopes`: the security context; null unless `auth` is ok. */
  securityContext: Record<string, unknown> | null;
  /** The verified claims as sent, `iat` and `exp` included. */
  claims: Record<string, unknown> | null;
  /** The `query` of the body: the JSON query of a load, the SQL text of a SQL query. */
  query: unknown;
}

export type SecurityContext = Record<string, unknown>;
export type Row = Record<string, unknown>;

export interface FakeSqlAnswer {
  columns: string[];
  rows: Row[];
  /** `column_type` of each column; by default guessed from the first row's values. */
  columnTypes?: string[];
}

export interface DataApiFake {
  /** The base address (`http://127.0.0.1:<port>`); the client appends `/cubejs-api/v1/...`. */
  url: string;
  secret: string;
  /** Every request received, in order. */
  requests: DataApiFakeRequest[];
  /** Settings for `startServiceApp` / `startApp`: the data API client pointed at this fake. */
  env(): Record<string, string>;
  /** The rows a load answers (default: none). Throw to refuse the query (400 `{error}`). */
  onLoad(
    handler: (query: Record<string, unknown>, ctx: SecurityContext, request: DataApiFakeRequest) => Row[],
  ): void;
  /** The result of a SQL query (default: no columns). Throw to refuse it (an `{error}` line). */
  onSql(handler: (sql: string, ctx: SecurityContext, request: DataApiFakeRequest) => FakeSqlAnswer): void;
  /** The body of `/meta` (default `{ cubes: [] }`). */
  onMeta(handler: (ctx: SecurityContext, request: DataApiFakeRequest) => unknown): void;
  /** The next `n` authenticated requests answer `{"error": "Continue wait"}` (200); `Infinity`: all. */
  continueWait(n: number): void;
  /** Every request answers `status` with `{"error": error}` (or a `body` as it is) until `reset()`. */
  failWith(status: number, error?: string, options?: { body?: string }): void;
  /** Every answer is sent `ms` late (0: on time). */
  delay(ms: number): void;
  /** Requests are recorded and never answered (until {@link release}). */
  hang(on?: boolean): void;
  /** Answers every request left hanging so far with `status` (default 503) and stops hanging. */
  release(status?: number): void;
  /** Back to a well-behaved data API with the default handlers; the recorded requests are kept. */
  reset(): void;
  /** Serves environment `environmentId` at `/deployments/<deploymentId>/dev-mode/<branch>`. */
  serveEnvironment(deploymentId: number, branch: string, environmentId: number): void;
  close(): Promise<void>;
}

const PREFIX = /^\/deployments\/(\d+)(\/.*)$/;
const DEV_MODE = /^\/dev-mode\/([^/]+)(\/.*)$/;
/** The scope Cube asks of each route. */
const ROUTE_SCOPES: Record<string, string> = {
  'POST /cubejs-api/v1/load': 'data',
  'POST /cubejs-api/v1/cubesql': 'sql',
  'GET /cubejs-api/v1/meta': 'meta',
};

export async function startDataApiFake(options: {
  secret: string;
  sqlChunkRows?: number;
}): Promise<DataApiFake> {
  const { secret } = options;
  const chunkRows = options.sqlChunkRows ?? 1000;
  const productionKey = new TextEncoder().encode(secret);
  /** `<deploymentId>/<branch>` -> the environment id served there. */
  const environments = new Map<string, number>();
  const environmentKey = (id: number) =>
    new TextEncoder().encode(createHmac('sha256', secret).update(`environment:${id}`).digest('hex'));
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const requests: DataApiFakeRequest[] = [];

  const defaults = () => ({
    load: (() => []) as Parameters<DataApiFake['onLoad']>[0],
    sql: (() => ({ columns: [], rows: [] })) as Parameters<DataApiFake['onSql']>[0],
    meta: (() => ({ cubes: [] })) as Parameters<DataApiFake['onMeta']>[0],
    waits: 0,
    failure: null as { status: number; error?: string; body?: string } | null,
    delayMs: 0,
    hang: false,
  });
  let state = defaults();
  /** Answers held back by `hang()`. */
  const hanging = new Set<ServerResponse>();

  const verify = async (header: string | undefined, key: Uint8Array | null) => {
    if (!header) return { auth: 'missing' as const, claims: null };
    if (!key) return { auth: 'unknown' as const, claims: null };
    if (/^bearer\s/i.test(header)) return { auth: 'bearer' as const, claims: null };
    try {
      const { payload } = await jwtVerify(header, key, { algorithms: ['HS256'] });
      return { auth: 'ok' as const, claims: payload as Record<string, unknown> };
    } catch {
      return { auth: 'invalid' as const, claims: null };
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const prefixed = PREFIX.exec(url.pathname);
    const below = prefixed ? prefixed[2] : url.pathname;
    const devMode = DEV_MODE.exec(below);
    const path = devMode ? devMode[2] : below;
    const branch = devMode ? decodeURIComponent(devMode[1]) : null;
    const environmentId = branch === null ? undefined : environments.get(`${prefixed?.[1]}/${branch}`);
    const key = branch === null ? productionKey : environmentId ? environmentKey(environmentId) : null;
    const raw = await readBody(req);
    let body: Record<string, unknown> = {};
    try {
      body = raw === '' ? {} : (JSON.parse(raw) as Record<string, unknown>);
    } catch {
      body = {};
    }
    const { auth, claims } = await verify(req.headers.authorization, key);
    const securityContext = claims
      ? Object.fromEntries(Object.entries(claims).filter(([k]) => !['iat', 'exp', 'scopes'].includes(k)))
      : null;
    const request: DataApiFakeRequest = {
      method: req.method ?? 'GET',
      path,
      deploymentId: prefixed ? Number(prefixed[1]) : null,
      branch,
      authorization: req.headers.authorization,
      auth,
      securityContext,
      claims,
      query: body.query,
    };
    requests.push(request);
    if (state.hang) {
      hanging.add(res);
      res.on('close', () => hanging.delete(res));
      return;
    }

    const answer = (status: number, text: string | string[]) => {
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(status, { 'Content-Type': 'application/json' });
        if (Array.isArray(text)) {
          for (const line of text) res.write(line);
          res.end();
        } else {
          res.end(text);
        }
      };
      if (state.delayMs <= 0) return send();
      const timer = setTimeout(() => {
        timers.delete(timer);
        send();
      }, state.delayMs);
      timers.add(timer);
    };
    const error = (status: number, message: string) => answer(status, JSON.stringify({ error: message }));

    if (state.failure) {
      const { status, error: message, body: text } = state.failure;
      return answer(status, text ?? JSON.stringify({ error: message ?? 'Internal Server Error' }));
    }
    if (auth === 'unknown') return error(404, `No environment serves dev-mode branch ${branch}`);
    if (auth === 'missing') return error(403, "Authorization header isn't set");
    if (auth !== 'ok' || !securityContext) return error(403, 'Invalid token');

    const route = `${request.method} ${path}`;
    const scope = ROUTE_SCOPES[route];
    if (!scope) return error(404, `Cannot ${route}`);
    const scopes = claims?.scopes;
    if (Array.isArray(scopes) && !scopes.includes(scope)) return error(403, `API scope is missing: ${scope}`);
    if (state.waits > 0) {
      state.waits -= 1;
      return answer(200, JSON.stringify({ error: 'Continue wait' }));
    }

    if (route === 'GET /cubejs-api/v1/meta') {
      return answer(200, JSON.stringify(state.meta(securityContext, request)));
    }
    if (route === 'POST /cubejs-api/v1/load') {
      const query = body.query;
      if (typeof query !== 'object' || query === null) return error(400, 'Query param is required');
      let data: Row[];
      try {
        data = state.load(query as Record<string, unknown>, securityContext, request);
      } catch (err) {
        return error(400, (err as Error).message);
      }
      return answer(200, JSON.stringify(loadAnswer(query as Record<string, unknown>, data)));
    }
    const sql = body.query;
    if (typeof sql !== 'string') return error(400, 'Query param is required');
    let result: FakeSqlAnswer;
    try {
      result = state.sql(sql, securityContext, request);
    } catch (err) {
      return answer(200, `${JSON.stringify({ error: (err as Error).message })}\n`);
    }
    return answer(200, sqlAnswer(result, chunkRows));
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    secret,
    requests,
    env: () => ({ DATA_API_URL_TEMPLATE: `${url}/deployments/{deploymentId}` }),
    serveEnvironment: (deploymentId, branch, environmentId) => {
      environments.set(`${deploymentId}/${branch}`, environmentId);
    },
    onLoad: (handler) => {
      state.load = handler;
    },
    onSql: (handler) => {
      state.sql = handler;
    },
    onMeta: (handler) => {
      state.meta = handler;
    },
    continueWait: (n) => {
      state.waits = n;
    },
    failWith: (status, error, opts) => {
      state.failure = { status, error, body: opts?.body };
    },
    delay: (ms) => {
      state.delayMs = ms;
    },
    hang: (on = true) => {
      state.hang = on;
    },
    release: (status = 503) => {
      state.hang = false;
      for (const res of [...hanging]) {
        hanging.delete(res);
        if (res.destroyed) continue;
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: 'released by the test' }));
      }
    },
    reset: () => {
      state = defaults();
    },
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** A load answer in Cube's shape, with an annotation of the members the query names. */
function loadAnswer(query: Record<string, unknown>, data: Row[]): Record<string, unknown> {
  const members = (name: string, type: string) =>
    Object.fromEntries(
      (Array.isArray(query[name]) ? (query[name] as unknown[]) : [])
        .filter((m): m is string => typeof m === 'string')
        .map((m) => [m, { title: m, shortTitle: m, type }]),
    );
  return {
    query,
    data,
    lastRefreshTime: new Date().toISOString(),
    annotation: {
      measures: members('measures', 'number'),
      dimensions: members('dimensions', 'string'),
      segments: {},
      timeDimensions: {},
    },
    dataSource: 'default',
    dbType: 'postgres',
    external: false,
    slowQuery: false,
  };
}

/** The NDJSON lines of a SQL answer: the schema, then the rows as arrays in column order. */
function sqlAnswer(result: FakeSqlAnswer, chunkRows: number): string[] {
  const first = result.rows[0] ?? {};
  const schema = result.columns.map((name, i) => ({
    name,
    column_type: result.columnTypes?.[i] ?? guessType(first[name]),
  }));
  const lines = [`${JSON.stringify({ schema, lastRefreshTime: new Date().toISOString() })}\n`];
  for (let i = 0; i < result.rows.length; i += chunkRows) {
    const data = result.rows.slice(i, i + chunkRows).map((row) => result.columns.map((c) => row[c] ?? null));
    lines.push(`${JSON.stringify({ data })}\n`);
  }
  return lines;
}

function guessType(value: unknown): string {
  if (typeof value === 'number') return Number.isInteger(value) ? 'Int64' : 'Float64';
  if (typeof value === 'boolean') return 'Boolean';
  return 'Utf8';
}
