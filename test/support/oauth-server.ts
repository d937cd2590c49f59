import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The one client the server knows (RFC 6749 2: a confidential client with one redirect URI). */
export interface ClientRegistration {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
}

/** Knobs a test turns to make the server misbehave or refuse. */
export interface ServerSettings {
  /** The (fake, logged-in) user refuses every authorization: `error=access_denied`. */
  deny: boolean;
  /** Code lifetime. */
  codeTtlMs: number;
  /** `expires_in` of issued access tokens; null leaves it out. */
  expiresIn: number | null;
  /** Issue a refresh token with the access token. */
  refreshToken: boolean;
  /** `refresh_token_expires_in`; null leaves it out. */
  refreshTokenExpiresIn: number | null;
  /** Wait this long before answering the token endpoint. */
  tokenDelayMs: number;
  /** Answer the token endpoint with exactly this instead of processing the request. */
  tokenResponse: { status: number; body: string; contentType?: string } | null;
}

interface IssuedCode {
  clientId: string;
  redirectUri: string;
  challenge: string;
  scope: string | null;
  user: string;
  expiresAt: number;
  used: boolean;
}

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string | null;
  scope: string | null;
  user: string;
}

const DEFAULTS: ServerSettings = {
  deny: false,
  codeTtlMs: 60_000,
  expiresIn: 3600,
  refreshToken: true,
  refreshTokenExpiresIn: null,
  tokenDelayMs: 0,
  tokenResponse: null,
};

/** RFC 7636 4.1: 43 to 128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
/** An S256 challenge: 32 bytes, base64url without padding. */
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** application/x-www-form-urlencoded decoding of one value (`+` is a space). */
const formDecode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));

/**
 * A small but real OAuth 2.0 authorization server for the tests, on node:http at 127.0.0.1:
 * the authorization code grant (RFC 6749 4.1) with PKCE, S256 only (RFC 7636), and client
 * authentication by HTTP Basic (RFC 6749 2.3.1). The resource owner is a fake user who is always
 * logged in and approves, unless `settings.deny` says otherwise.
 */
export class OAuthTestServer {
  readonly settings: ServerSettings = { ...DEFAULTS };
  /** Every token set issued, newest last. */
  readonly issued: IssuedTokens[] = [];
  /** How many requests reached the token endpoint. */
  tokenRequests = 0;
  private readonly codes = new Map<string, IssuedCode>();

  private constructor(
    private readonly server: Server,
    readonly client: ClientRegistration,
    readonly url: string,
  ) {}

  static async start(client: ClientRegistration): Promise<OAuthTestServer> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const self = new OAuthTestServer(server, client, `http://127.0.0.1:${port}`);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      self.handle(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    });
    return self;
  }

  get authorizeUrl(): string {
    return `${this.url}/authorize`;
  }

  get tokenUrl(): string {
    return `${this.url}/token`;
  }

  reset(): void {
    Object.assign(this.settings, DEFAULTS);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    if (req.method === 'GET' && url.pathname === '/authorize') return this.authorize(url.searchParams, res);
    if (req.method === 'POST' && url.pathname === '/token') return this.token(req, res);
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
  }

  /** RFC 6749 4.1.1 / 4.1.2: validate, then send the user agent back with a code or an error. */
  private authorize(q: URLSearchParams, res: ServerResponse): void {
    const once = (name: string) => (q.getAll(name).length > 1 ? undefined : (q.get(name) ?? undefined));
    const clientId = once('client_id');
    const redirectUri = once('redirect_uri');
    // 4.1.2.1: with an unknown client or a wrong redirect URI, never redirect.
    if (clientId !== this.client.clientId) {
      res.writeHead(400, { 'Content-Type': 'text/plain' }).end('unknown client_id');
      return;
    }
    if (redirectUri !== this.client.redirectUri) {
      res
        .writeHead(400, { 'Content-Type': 'text/plain' })
        .end('redirect_uri does not match the registration');
      return;
    }
    const state = once('state');
    const back = (params: Record<string, string>) => {
      const target = new URL(redirectUri);
      for (const [k, v] of Object.entries(params)) target.searchParams.set(k, v);
      if (state !== undefined) target.searchParams.set('state', state);
      res.writeHead(302, { Location: target.toString(), 'Cache-Control': 'no-store' }).end();
    };
    if (once('response_type') !== 'code') {
      return back({ error: 'unsupported_response_type', error_description: 'Only response_type=code' });
    }
    const challenge = once('code_challenge');
    const method = once('code_challenge_method');
    if (!challenge || !CHALLENGE.test(challenge)) {
      return back({ error: 'invalid_request', error_description: 'code_challenge is required (PKCE)' });
    }
    if (method !== 'S256') {
      return back({ error: 'invalid_request', error_description: 'code_challenge_method must be S256' });
    }
    if (this.settings.deny) {
      return back({ error: 'access_denied', error_description: 'The user declined the request' });
    }
    const code = randomBytes(32).toString('base64url');
    this.codes.set(code, {
      clientId,
      redirectUri,
      challenge,
      scope: once('scope') ?? null,
      user: 'alice@provider.test',
      expiresAt: Date.now() + this.settings.codeTtlMs,
      used: false,
    });
    back({ code });
  }

  /** RFC 6749 4.1.3 / 4.1.4 / 5: authenticate the client, check the code, answer tokens or an error. */
  private async token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.tokenRequests += 1;
    const raw = await readBody(req);
    if (this.settings.tokenDelayMs > 0) {
      await new Promise((resolve) => setTimeout(resolve, this.settings.tokenDelayMs));
    }
    if (this.settings.tokenResponse) {
      const { status, body, contentType } = this.settings.tokenResponse;
      res.writeHead(status, { 'Content-Type': contentType ?? 'application/json' }).end(body);
      return;
    }
    const fail = (status: number, error: string, description: string, headers: Record<string, string> = {}) =>
      void res
        .writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', ...headers })
        .end(JSON.stringify({ error, error_description: description }));

    if (!/^application\/x-www-form-urlencoded\b/i.test(req.headers['content-type'] ?? '')) {
      return fail(400, 'invalid_request', 'The body must be application/x-www-form-urlencoded');
    }
    const client = basicCredentials(req.headers.authorization);
    if (!client || client.id !== this.client.clientId || client.secret !== this.client.clientSecret) {
      return fail(401, 'invalid_client', 'Client authentication failed', {
        'WWW-Authenticate': 'Basic realm="token"',
      });
    }
    const form = new URLSearchParams(raw);
    for (const name of ['grant_type', 'code', 'redirect_uri', 'code_verifier']) {
      if (form.getAll(name).length > 1) return fail(400, 'invalid_request', `${name} is repeated`);
    }
    if (form.get('grant_type') !== 'authorization_code') {
      return fail(400, 'unsupported_grant_type', 'Only authorization_code');
    }
    const code = form.get('code') ?? '';
    const issued = this.codes.get(code);
    if (!issued || issued.used || issued.expiresAt < Date.now() || issued.clientId !== client.id) {
      return fail(400, 'invalid_grant', 'The code is invalid, expired or already used');
    }
    // Single use whatever happens next: a code is never tried twice.
    issued.used = true;
    if (form.get('redirect_uri') !== issued.redirectUri) {
      return fail(400, 'invalid_grant', 'redirect_uri differs from the authorization request');
    }
    const verifier = form.get('code_verifier') ?? '';
    if (!VERIFIER.test(verifier))
      return fail(400, 'invalid_request', 'code_verifier is missing or malformed');
    if (createHash('sha256').update(verifier, 'ascii').digest('base64url') !== issued.challenge) {
      return fail(400, 'invalid_grant', 'PKCE verification failed');
    }
    const tokens: IssuedTokens = {
      accessToken: `at-${randomBytes(24).toString('base64url')}`,
      refreshToken: this.settings.refreshToken ? `rt-${randomBytes(24).toString('base64url')}` : null,
      scope: issued.scope,
      user: issued.user,
    };
    this.issued.push(tokens);
    const body: Record<string, unknown> = { access_token: tokens.accessToken, token_type: 'Bearer' };
    if (this.settings.expiresIn !== null) body.expires_in = this.settings.expiresIn;
    if (tokens.refreshToken) body.refresh_token = tokens.refreshToken;
    if (this.settings.refreshTokenExpiresIn !== null) {
      body.refresh_token_expires_in = this.settings.refreshTokenExpiresIn;
    }
    if (tokens.scope !== null) body.scope = tokens.scope;
    res
      .writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', Pragma: 'no-cache' })
      .end(JSON.stringify(body));
  }
}

/** RFC 6749 2.3.1: Basic credentials whose two halves are form-urlencoded. */
function basicCredentials(header: string | undefined): { id: string; secret: string } | null {
  const m = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(header ?? '');
  if (!m) return null;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  try {
    return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    return null;
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** A port on 127.0.0.1 where nothing listens (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
