import { Injectable } from '@nestjs/common';
import type { Principal } from '../../core/auth/principal.js';
import { Database } from '../../core/database/database.js';
import { DomainEvents, type DomainEvent } from '../../core/events/domain-events.js';
import { ApiError } from '../../core/errors/api-error.js';
import { DirectoryService, type DirectoryUser } from '../users/directory.service.js';
import { UsersService } from '../users/users.service.js';
import { compileFilter, USER_FILTER_COLUMNS } from './filter/filter-sql.js';
import { applyOperation, normalizeResource } from './patch/patch-engine.js';
import { hasSchema, isObject, parsePatchRequest } from './patch/patch-request.js';
import { byKey, checkIfMatch, listResponse, type ListQuery, type ListResponse } from './scim-http.js';
import { project } from './scim-projection.js';
import { toScimUser, unchanged, userDocument, userEtag, userInput } from './scim-users.mapper.js';
import { scimError } from './scim.errors.js';
import { URN, USER_SCHEMA } from './scim.schema.js';

/** A single resource and its version, for the ETag header. */
export interface ScimResult {
  resource: Record<string, unknown>;
  etag: string;
}

/** The 409 of a taken userName or email as the SCIM `uniqueness` error. */
export function asUniqueness(err: unknown): unknown {
  if (err instanceof ApiError && ['username_taken', 'email_taken', 'group_name_taken'].includes(err.code)) {
    return scimError('uniqueness', String(err.messages));
  }
  return err;
}

/** `scim.user_deprovisioned`: a user deactivated (`active: false`) or deleted through SCIM. */
function deprovisioned(accountId: number, id: number, data: Record<string, unknown>): DomainEvent {
  return { accountId, type: 'scim.user_deprovisioned', resource: { type: 'user', id }, data };
}

function notFound(id: number): ApiError {
  return scimError('scim_not_found', `User ${id} was not found`);
}

/**
 * SCIM Users (RFC 7644 section 3) over the account's console users. Writes go through
 * `DirectoryService` (columns), `UsersService` (deactivation guards, deletion).
 */
@Injectable()
export class ScimUsersService {
  constructor(
    private readonly db: Database,
    private readonly directory: DirectoryService,
    private readonly users: UsersService,
    private readonly events: DomainEvents,
  ) {}

  async list(actor: Principal, query: ListQuery, base: string): Promise<ListResponse> {
    const where = query.filter ? compileFilter(USER_FILTER_COLUMNS, query.filter) : null;
    const page = await this.directory.findUsers(actor.accountId, where, query.startIndex - 1, query.count);
    // One query for the whole page's memberships (never one per user), grouped in one pass.
    const groups = byKey(
      await this.directory.groupsOfUsers(
        actor.accountId,
        page.rows.map((u) => u.id),
      ),
      (g) => g.userId,
    );
    const resources = page.rows.map((u) =>
      project(toScimUser(u, groups.get(u.id) ?? [], base), query.projection),
    );
    return listResponse(page.total, query.startIndex, resources);
  }

  async get(actor: Principal, id: number, base: string): Promise<ScimResult> {
    const user = await this.directory.getUser(actor.accountId, id);
    if (!user) throw notFound(id);
    return this.result(actor, user, base);
  }

  async create(actor: Principal, body: unknown, base: string): Promise<ScimResult> {
    const input = userInput(this.document(body), null);
    try {
      const user = await this.directory.createUser(actor.accountId, input);
      return await this.result(actor, user, base);
    } catch (err) {
      throw asUniqueness(err);
    }
  }

  /** PUT (RFC 7644 section 3.5.1): every writable attribute replaced; omitted ones cleared. */
  async replace(
    actor: Principal,
    id: number,
    body: unknown,
    ifMatch: string | undefined,
    base: string,
  ): Promise<ScimResult> {
    const doc = this.document(body);
    return this.write(actor, id, ifMatch, base, (current) => userInput(doc, current));
  }

  /** PATCH (RFC 7644 section 3.5.2): every operation applied in order, the result checked once. */
  async patch(
    actor: Principal,
    id: number,
    body: unknown,
    ifMatch: string | undefined,
    base: string,
  ): Promise<ScimResult> {
    const operations = parsePatchRequest(body);
    return this.write(actor, id, ifMatch, base, (current) => {
      const doc = userDocument(current);
      for (const operation of operations) applyOperation(doc, operation, USER_SCHEMA);
      // The document always holds `active`: gone means removed. Unassigned would keep the state
      // (as an omitted one does in PUT), so the request would answer 200 and do nothing; an
      // identity provider meaning "deactivate" must be told instead.
      if (doc.active === undefined) {
        throw scimError(
          'invalidValue',
          'active cannot be removed: send {"op": "replace", "path": "active", "value": false} to deactivate',
        );
      }
      return userInput(doc, current);
    });
  }

  /**
   * DELETE through `UsersService.remove` (not yourself, not the last admin; the user's content
   * passes to the caller), in one transaction with the `If-Match` comparison on the locked row.
   * Publishes `scim.user_deprovisioned` with what identifies the user and `deleted: true`.
   */
  async remove(actor: Principal, id: number, ifMatch: string | undefined): Promise<void> {
    await this.db.transaction(async () => {
      const user = await this.directory.lockUser(actor.accountId, id);
      if (ifMatch !== undefined) {
        if (!user) throw notFound(id);
        const groups = await this.directory.groupsOfUsers(actor.accountId, [id]);
        checkIfMatch(ifMatch, userEtag(user, groups));
      }
      // A user that is not there: the users module answers its 404.
      await this.users.remove(actor, id);
      if (user) {
        await this.events.publish(
          deprovisioned(actor.accountId, id, {
            id: String(id),
            ...(user.externalId !== null ? { externalId: user.externalId } : {}),
            userName: user.username,
            active: false,
            deleted: true,
          }),
        );
      }
    });
  }

  /**
   * One read-modify-write in a transaction: the user is locked, `If-Match` compared with its
   * current version, the new columns computed and written, deactivation guarded.
   */
  private async write(
    actor: Principal,
    id: number,
    ifMatch: string | undefined,
    base: string,
    compute: (current: DirectoryUser) => ReturnType<typeof userInput>,
  ): Promise<ScimResult> {
    try {
      return await this.db.transaction(async () => {
        const current = await this.directory.lockUser(actor.accountId, id);
        if (!current) throw notFound(id);
        const groups = await this.directory.groupsOfUsers(actor.accountId, [id]);
        checkIfMatch(ifMatch, userEtag(current, groups));
        const input = compute(current);
        // Nothing to change: no write, so meta.lastModified and the version stay.
        if (unchanged(current, input)) {
          return { resource: toScimUser(current, groups, base), etag: userEtag(current, groups) };
        }
        const deactivating = input.isDeactivated && !current.isDeactivated;
        if (deactivating) await this.users.guardDeactivation(actor, id);
        const updated = await this.directory.updateUser(actor.accountId, id, input);
        const resource = toScimUser(updated, groups, base);
        // Deprovisioned (`active` set to false): the user as this SCIM resource shows it.
        if (deactivating) await this.events.publish(deprovisioned(actor.accountId, id, resource));
        return { resource, etag: userEtag(updated, groups) };
      });
    } catch (err) {
      throw asUniqueness(err);
    }
  }

  private async result(actor: Principal, user: DirectoryUser, base: string): Promise<ScimResult> {
    const groups = await this.directory.groupsOfUsers(actor.accountId, [user.id]);
    return { resource: toScimUser(user, groups, base), etag: userEtag(user, groups) };
  }

  /** A POST or PUT body: a User resource (RFC 7644 section 3.3), as a document. */
  private document(body: unknown): ReturnType<typeof normalizeResource> {
    if (!isObject(body)) throw scimError('invalidSyntax', 'The request body must be a User JSON object');
    if (!hasSchema(body, URN.user)) throw scimError('invalidSyntax', `schemas must contain "${URN.user}"`);
    return normalizeResource(body, USER_SCHEMA);
  }
}
