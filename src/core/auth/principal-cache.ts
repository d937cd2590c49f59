import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import { AppConfig } from '../config/app-config.js';
import { Database } from '../database/database.js';
import type { Principal } from './principal.js';

/** The channel the triggers of migration 1764300000100-PrincipalChanges notify on. */
export const PRINCIPALS_CHANNEL = 'principals_changed';
/** Most tokens held; the oldest entry makes room for a new one. */
const MAX_ENTRIES = 10_000;
const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 10_000;

/** What a token resolved to, and when its key was last recorded as used. */
export interface ResolvedToken {
  readonly principal: Principal;
  lastUsedAt: Date | null;
}

interface Entry {
  token: ResolvedToken;
  /** `Date.now()` after which the entry is not used. */
  until: number;
}

/**
 * A token's resolved principal, reused for a short time ({@link AppConfig.principalCacheTtlMs})
 * so that most requests skip the token query.
 *
 * Every write that can change what a token resolves to (a key revoked, a user deactivated or
 * deleted, a role, group membership or grant changed) empties the cache:
 * - in the process that made it, when its unit of work commits: the repository that writes
 *   calls {@link changed}, so the caller's next request already sees the change;
 * - in every other process within milliseconds: statement triggers on those tables
 *   `pg_notify` the {@link PRINCIPALS_CHANNEL} channel at commit, whatever wrote (this API, the
 *   admin command line, SQL by hand), and each API process `LISTEN`s on a connection of its own.
 *
 * While that connection is down (and until it is up), nothing is cached: a process that could
 * miss a notification never serves a stale principal. The embedded database is one process, so
 * there the cache needs no listener. A lookup that raced with a change is not stored (the
 * generation check in {@link store}).
 */
@Injectable()
export class PrincipalCache implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(PrincipalCache.name);
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  /** Whether entries may be used: the listener is up, or no other process can write. */
  private live = false;
  private generation = 0;
  private listener: pg.Client | null = null;
  private reconnectMs = RECONNECT_MIN_MS;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly config: AppConfig,
    private readonly db: Database,
    private readonly dataSource: DataSource,
  ) {
    this.ttlMs = config.role === 'api' ? config.principalCacheTtlMs : 0;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.ttlMs === 0) return;
    if (this.config.embedded) {
      this.live = true;
      return;
    }
    await this.listen();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.disconnected();
    const listener = this.listener;
    this.listener = null;
    await listener?.end().catch(() => undefined);
  }

  /** The generation to hand to {@link store}: read it before looking the token up. */
  get version(): number {
    return this.generation;
  }

  get(tokenHash: string): ResolvedToken | undefined {
    if (!this.live) return undefined;
    const entry = this.entries.get(tokenHash);
    if (!entry) return undefined;
    if (entry.until > Date.now()) return entry.token;
    this.entries.delete(tokenHash);
    return undefined;
  }

  /**
   * Keeps `token` for `tokenHash` unless something changed since `version` was read (the
   * lookup may then have read the state before the change). Never past the key's expiry.
   */
  store(tokenHash: string, token: ResolvedToken, expiresAt: Date | null, version: number): void {
    if (!this.live || version !== this.generation) return;
    const until = Math.min(Date.now() + this.ttlMs, expiresAt?.getTime() ?? Infinity);
    if (this.entries.size >= MAX_ENTRIES) {
      this.entries.delete(this.entries.keys().next().value!);
    }
    this.entries.set(tokenHash, { token, until });
  }

  /**
   * Called by the repositories that write keys, users, roles, groups and grants: empties this
   * process's cache once the current unit of work commits (at once outside one). Other
   * processes hear of it from the triggers.
   */
  changed(): void {
    if (this.ttlMs === 0) return;
    this.db.afterCommit(() => this.clear());
  }

  /**
   * Awaits `write` (a statement on keys, users, roles, groups or grants), then {@link changed}:
   * after the statement, so that a lookup racing with it cannot store the state before it.
   */
  async invalidatedBy<T>(write: Promise<T>): Promise<T> {
    const result = await write;
    this.changed();
    return result;
  }

  /** Drops every entry. */
  clear(): void {
    this.generation += 1;
    this.entries.clear();
  }

  private async listen(): Promise<void> {
    const pool = (this.dataSource.driver as PostgresDriver).master as pg.Pool & {
      Client: typeof pg.Client;
      options: pg.ClientConfig;
    };
    // The pool's own client class and options: the same server, credentials and TLS.
    const client = new pool.Client({ ...pool.options, keepAlive: true });
    client.on('notification', () => this.clear());
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('the connection closed')));
    this.listener = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${PRINCIPALS_CHANNEL}`);
    } catch (err) {
      this.lost(client, err as Error);
      return;
    }
    if (this.listener !== client) return;
    // Whatever changed while no one listened is not in the cache: it starts empty.
    this.clear();
    this.live = true;
    this.reconnectMs = RECONNECT_MIN_MS;
  }

  private lost(client: pg.Client, err: Error): void {
    if (this.listener !== client) return;
    this.listener = null;
    this.disconnected();
    client.end().catch(() => undefined);
    if (this.stopped) return;
    this.logger.warn(
      `Lost the ${PRINCIPALS_CHANNEL} listener (${err.message}); tokens are looked up on every request until it is back`,
    );
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.listen();
    }, this.reconnectMs);
    this.reconnectTimer.unref();
    this.reconnectMs = Math.min(this.reconnectMs * 2, RECONNECT_MAX_MS);
  }

  private disconnected(): void {
    this.live = false;
    this.clear();
  }
}
