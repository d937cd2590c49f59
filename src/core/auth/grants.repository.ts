import { Injectable } from '@nestjs/common';
import { Database } from '../database/database.js';
import { PrincipalCache } from './principal-cache.js';

/** Who a grant is given to: a user directly, a custom role, or a group. */
export type GrantPrincipalType = 'role' | 'user' | 'group';

export interface GrantPrincipal {
  type: GrantPrincipalType;
  id: number;
}

/** One stored grant: one action on one resource (`*` for every resource of the type). */
export interface GrantRow {
  resourceType: string;
  resourceId: string;
  action: string;
}

/** A stored grant with the principal holding it. */
export interface PrincipalGrantRow extends GrantRow {
  principalType: GrantPrincipalType;
  principalId: number;
}

/** The principals whose grants a caller holds: themselves, their roles and their groups. */
export interface GrantHolder {
  accountId: number;
  userId: number;
  roleIds: readonly number[];
  groupIds: readonly number[];
}

/**
 * All SQL on `policies` (object grants and the policies of roles, users and groups), one row per
 * (principal, resource, action). Runs on the caller's unit of work when one is open.
 */
@Injectable()
export class GrantsRepository {
  constructor(
    private readonly db: Database,
    private readonly principals: PrincipalCache,
  ) {}

  /** The grants `holder` holds on the given resources (`type`, `id` pairs). */
  heldOn(holder: GrantHolder, resources: ReadonlyArray<{ type: string; id: string }>): Promise<GrantRow[]> {
    return this.db.query<GrantRow>(
      `SELECT resource_type AS "resourceType", resource_id AS "resourceId", action
       FROM policies
       WHERE account_id = :accountId
         AND ((principal_type = 'user' AND principal_id = :userId)
           OR (principal_type = 'role' AND principal_id = ANY(:roleIds))
           OR (principal_type = 'group' AND principal_id = ANY(:groupIds)))
         AND (resource_type, resource_id) IN (SELECT * FROM unnest(:types::text[], :ids::text[]))`,
      {
        accountId: holder.accountId,
        userId: holder.userId,
        roleIds: holder.roleIds,
        groupIds: holder.groupIds,
        types: resources.map((r) => r.type),
        ids: resources.map((r) => r.id),
      },
    );
  }

  /** The grants of each principal, ordered by resource type, resource id and action. */
  ofPrincipals(accountId: number, principals: readonly GrantPrincipal[]): Promise<PrincipalGrantRow[]> {
    return this.db.query<PrincipalGrantRow>(
      `SELECT principal_type AS "principalType", principal_id AS "principalId", resource_type AS "resourceType",
              resource_id AS "resourceId", action
       FROM policies
       WHERE account_id = :accountId
         AND (principal_type, principal_id) IN (SELECT * FROM unnest(:types::text[], :ids::int[]))
       ORDER BY resource_type, resource_id, action`,
      { accountId, types: principals.map((p) => p.type), ids: principals.map((p) => p.id) },
    );
  }

  /** The grants every principal holds on one resource (`*`: on every resource of the type). */
  onResource(accountId: number, type: string, resourceId: string): Promise<PrincipalGrantRow[]> {
    return this.db.query<PrincipalGrantRow>(
      `SELECT principal_type AS "principalType", principal_id AS "principalId", resource_type AS "resourceType",
              resource_id AS "resourceId", action
       FROM policies
       WHERE account_id = :accountId AND resource_type = :type AND resource_id = :resourceId
       ORDER BY principal_type, principal_id, action`,
      { accountId, type, resourceId },
    );
  }

  /** Deletes every grant of one principal. */
  async deleteOfPrincipal(accountId: number, principal: GrantPrincipal): Promise<void> {
    await this.principals.invalidatedBy(
      this.db.query(
        `DELETE FROM policies WHERE account_id = :accountId AND principal_type = :type AND principal_id = :id`,
        { accountId, type: principal.type, id: principal.id },
      ),
    );
  }

  /** Adds grants to one principal; grants it already holds stay. */
  async insert(accountId: number, principal: GrantPrincipal, grants: readonly GrantRow[]): Promise<void> {
    if (grants.length === 0) return;
    await this.principals.invalidatedBy(
      this.db.query(
        `INSERT INTO policies (account_id, principal_type, principal_id, resource_type, resource_id, action)
       SELECT :accountId, :principalType, :principalId, t.resource_type, t.resource_id, t.action
       FROM unnest(:types::text[], :ids::text[], :actions::text[]) AS t(resource_type, resource_id, action)
       ON CONFLICT DO NOTHING`,
        {
          accountId,
          principalType: principal.type,
          principalId: principal.id,
          types: grants.map((g) => g.resourceType),
          ids: grants.map((g) => g.resourceId),
          actions: grants.map((g) => g.action),
        },
      ),
    );
  }

  /** Deletes every grant on the given resources of one type. */
  async deleteOnResources(accountId: number, type: string, ids: readonly string[]): Promise<void> {
    await this.principals.invalidatedBy(
      this.db.query(
        `DELETE FROM policies WHERE account_id = :accountId AND resource_type = :type AND resource_id = ANY(:ids)`,
        { accountId, type, ids },
      ),
    );
  }
}
