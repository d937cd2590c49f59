import { Injectable } from '@nestjs/common';
import { Database } from '../database/database.js';
import type { SqlParams } from '../database/named-params.js';
import { coreError } from '../errors/api-error.js';
import { notFound } from '../errors/not-found.js';
import {
  actionsGranting,
  actionsGrantingThrough,
  contentActions,
  Action,
  type ContentType,
  expandActions,
  inheritedActions,
} from './action.js';
import {
  GrantsRepository,
  type GrantPrincipal,
  type GrantRow,
  type PrincipalGrantRow,
} from './grants.repository.js';
import type { Principal } from './principal.js';
import { PrincipalSource } from './principal-source.js';
import { toPrincipal } from './token-principal.js';

export type { GrantPrincipal, GrantRow, PrincipalGrantRow };

/** Resource types that can carry object-level grants (the reference's policy resource types). */
export type GrantableType = 'Deployment' | 'Folder' | 'Workbook' | 'Report';

/** The action that lets a caller see a resource of each type at all. */
const READ: Record<GrantableType, Action> = {
  Deployment: Action.DeploymentRead,
  Folder: contentActions('Folder')[0],
  Workbook: contentActions('Workbook')[0],
  Report: contentActions('Report')[0],
};

export interface ResourceRef {
  type: GrantableType;
  id: number;
  /** The owner of the resource (first entry of a chain only): owners manage what they own. */
  ownerId?: number | null;
}

/**
 * Knows where one resource type lives. For each requested id that exists in the account it
 * returns the resources whose grants it inherits (itself first, then e.g. its folders).
 */
export interface ResourceResolver {
  resolve(accountId: number, ids: readonly number[]): Promise<Map<number, ResourceRef[]>>;
}

/** What the caller may do with each resource of a set that exists in their account. */
export class AccessMap {
  constructor(
    private readonly global: ReadonlySet<Action>,
    private readonly granted: Map<number, Set<Action>>,
  ) {}

  exists(id: number): boolean {
    return this.granted.has(id);
  }

  can(id: number, action: Action): boolean {
    const held = this.granted.get(id);
    return held !== undefined && (this.global.has(action) || held.has(action));
  }

  ids(action: Action): number[] {
    return [...this.granted.keys()].filter((id) => this.can(id, action));
  }
}

/**
 * The one place object-level access is decided. It answers for a set of ids in one query, so
 * bulk endpoints and single-resource endpoints share the same path, and a resource the caller
 * may not read is indistinguishable from one that does not exist.
 */
@Injectable()
export class AccessService {
  private readonly resolvers = new Map<GrantableType, ResourceResolver>();

  constructor(
    private readonly grants: GrantsRepository,
    private readonly db: Database,
    private readonly principals: PrincipalSource,
  ) {}

  register(type: GrantableType, resolver: ResourceResolver): void {
    this.resolvers.set(type, resolver);
  }

  /** Whether grants on `type` can be checked yet (its module registered a resolver). */
  supports(type: GrantableType): boolean {
    return this.resolvers.has(type);
  }

  async map(principal: Principal, type: GrantableType, ids: readonly number[]): Promise<AccessMap> {
    const resolver = this.resolvers.get(type);
    if (!resolver) throw new Error(`No access resolver registered for ${type}`);
    const unique = [...new Set(ids)];
    const existing = unique.length ? await resolver.resolve(principal.accountId, unique) : new Map();
    const granted = new Map<number, Set<Action>>();
    if (principal.scope) {
      // A scoped credential holds its actions on its one object (and what is inside it), only.
      const { scope } = principal;
      for (const [id, chain] of existing) {
        const inScope = (chain as ResourceRef[]).some(
          (ref) => ref.type === scope.type && ref.id === scope.id,
        );
        granted.set(id, inScope ? new Set(inheritedActions(scope.type, type, scope.actions)) : new Set());
      }
      return new AccessMap(new Set(), granted);
    }
    for (const [id, chain] of existing) {
      const owned = chain[0]?.ownerId === principal.userId && type !== 'Deployment';
      const held: Set<Action> = owned ? expandActions([contentActions(type)[2]]) : new Set();
      // Policies on every resource of a type (`["All"]`) reach each resource of it, and what
      // is inside, as a grant on that very resource would.
      for (const ref of chain) {
        const wide = principal.typeActions.get(ref.type);
        if (wide) for (const a of inheritedActions(ref.type, type, wide)) held.add(a);
      }
      granted.set(id, held);
    }
    if (existing.size === 0 || principal.isAdmin) return new AccessMap(principal.actions, granted);

    const refs = new Map<string, number[]>();
    for (const [id, chain] of existing) {
      for (const ref of chain) {
        const key = `${ref.type}:${ref.id}`;
        const holders = refs.get(key);
        if (holders) holders.push(id);
        else refs.set(key, [id]);
      }
    }
    if (principal.objectActions.size > 0) {
      const rows = await this.grants.heldOn(
        principal,
        [...refs.keys()].map((key) => {
          const at = key.indexOf(':');
          return { type: key.slice(0, at), id: key.slice(at + 1) };
        }),
      );
      for (const row of rows) {
        const held = expandActions([row.action]);
        const given = inheritedActions(row.resourceType, type, held);
        for (const id of refs.get(`${row.resourceType}:${row.resourceId}`) ?? []) {
          for (const a of given) granted.get(id)!.add(a);
        }
      }
    }
    return new AccessMap(principal.actions, granted);
  }

  /** The ids of `ids` on which the caller holds `action`. */
  async permitted(
    principal: Principal,
    action: Action,
    type: GrantableType,
    ids: readonly number[],
  ): Promise<number[]> {
    return (await this.map(principal, type, ids)).ids(action);
  }

  /**
   * Drops every grant on the given resources, inside the caller's unit of work. Grants have no
   * foreign key to what they name, so a module deleting resources calls this in the same
   * transaction as the delete.
   */
  async forget(accountId: number, type: GrantableType | 'Dashboard', ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    await this.grants.deleteOnResources(accountId, type, ids.map(String));
  }

  /**
   * Drops every grant held by a principal (a user, role or group being deleted), inside the
   * caller's unit of work: grants have no foreign key to their principal either.
   */
  async forgetPrincipal(accountId: number, principal: GrantPrincipal): Promise<void> {
    await this.grants.deleteOfPrincipal(accountId, principal);
  }

  /** The grants stored for each principal, ordered by resource type, resource id and action. */
  grantsOf(accountId: number, principals: readonly GrantPrincipal[]): Promise<PrincipalGrantRow[]> {
    if (principals.length === 0) return Promise.resolve([]);
    return this.grants.ofPrincipals(accountId, principals);
  }

  /**
   * The grants every principal (users, roles, groups) holds on one resource, ordered by principal
   * and action; `resourceId` `*` reads the grants on every resource of the type.
   */
  grantsOn(accountId: number, type: string, resourceId: string): Promise<PrincipalGrantRow[]> {
    return this.grants.onResource(accountId, type, resourceId);
  }

  /**
   * Makes `grants` the exact grants of one principal, inside the caller's unit of work (the
   * caller validates them and locks the principal so parallel replacements serialise).
   */
  async replaceGrants(
    accountId: number,
    principal: GrantPrincipal,
    grants: readonly GrantRow[],
  ): Promise<void> {
    await this.db.transaction(async () => {
      await this.grants.deleteOfPrincipal(accountId, principal);
      await this.grants.insert(accountId, principal, grants);
    });
  }

  /**
   * The one object check: the caller may perform `action` on one resource, or this throws. A
   * resource that does not exist in the account, or that the caller cannot even read, is 404
   * (`<kind>_not_found`); one they can read but not act on is 403.
   */
  async requireAccess(principal: Principal, type: GrantableType, id: number, action: Action): Promise<void> {
    const access = await this.map(principal, type, [id]);
    if (!access.can(id, READ[type])) throw notFound(type, id);
    if (!access.can(id, action)) {
      throw coreError(
        'forbidden',
        `This operation requires the ${action} action on this ${type.toLowerCase()}`,
      );
    }
  }

  /**
   * Which of `userIds` (users of the account) hold `action` on one resource now, decided as
   * {@link requireAccess} decides it for a request of theirs (their roles, groups and grants as
   * they are now; deactivated users hold nothing). For other users than the caller, such as the
   * reviewers the merge gate counts: one query for the users, then {@link map} for each.
   */
  async usersHolding(
    accountId: number,
    type: GrantableType,
    id: number,
    action: Action,
    userIds: readonly number[],
  ): Promise<Set<number>> {
    const unique = [...new Set(userIds)];
    if (unique.length === 0) return new Set();
    const rows = await this.principals.byUserIds(accountId, unique);
    const held = await Promise.all(
      rows.map(async (row) => {
        const access = await this.map(toPrincipal(row), type, [id]);
        return access.can(id, READ[type]) && access.can(id, action) ? row.userId : null;
      }),
    );
    return new Set(held.filter((userId): userId is number => userId !== null));
  }

  /**
   * A SQL predicate keeping, of a list of `type` rows, those on which the caller holds `action`
   * directly (`TRUE` for callers holding it account-wide), so one query pages through visible
   * rows only. Its parameters are named `<prefix>Account`, `<prefix>User`, ... so two scopes
   * in one query need two prefixes.
   */
  listScopeSql(
    principal: Principal,
    type: GrantableType,
    action: Action,
    idColumn: string,
    prefix = 'scope',
  ): { sql: string; params: SqlParams } {
    if (principal.actions.has(action) || principal.typeActions.get(type)?.has(action)) {
      return { sql: 'TRUE', params: {} };
    }
    if (!principal.objectActions.has(action)) return { sql: 'FALSE', params: {} };
    const n = (name: string) => `${prefix}${name}`;
    return {
      sql: `${idColumn}::text IN (SELECT resource_id FROM policies WHERE account_id = :${n('Account')}
        AND resource_type = :${n('Type')} AND action = ANY(:${n('Actions')})
        AND ((principal_type = 'user' AND principal_id = :${n('User')})
          OR (principal_type = 'role' AND principal_id = ANY(:${n('Roles')}))
          OR (principal_type = 'group' AND principal_id = ANY(:${n('Groups')}))))`,
      params: {
        [n('Account')]: principal.accountId,
        [n('User')]: principal.userId,
        [n('Roles')]: principal.roleIds,
        [n('Type')]: type,
        [n('Actions')]: actionsGranting(action),
        [n('Groups')]: principal.groupIds,
      },
    };
  }

  /**
   * A SQL predicate keeping, of a list of workspace rows, those on which the caller holds `action`: account-wide, as owner, by a grant on the row
   * itself, on its workbook, or on its folder or any folder above it. `cols` names the row's
   * columns; `folderChain` is an expression for the ids of the row's folder chain (an
   * `integer[]`). Parameters are named `<prefix>Account`, `<prefix>User`, ...
   */
  contentScopeSql(
    principal: Principal,
    type: ContentType,
    action: Action,
    cols: { id: string; owner: string; workbookId?: string; folderChain?: string },
    prefix = 'scope',
  ): { sql: string; params: SqlParams } {
    const wide = (from: ContentType) => {
      const held = principal.typeActions.get(from);
      return held !== undefined && inheritedActions(from, type, held).has(action);
    };
    if (principal.actions.has(action) || wide(type)) return { sql: 'TRUE', params: {} };
    // Policies on every workbook or every folder reach what is in a workbook, or in a folder.
    const inside: string[] = [];
    if (cols.workbookId && wide('Workbook')) inside.push(`${cols.workbookId} IS NOT NULL`);
    if (cols.folderChain && wide('Folder')) {
      inside.push(`COALESCE((${cols.folderChain})[cardinality(${cols.folderChain})] IS NOT NULL, FALSE)`);
    }
    const insideSql = inside.map((c) => ` OR ${c}`).join('');
    const n = (name: string) => `${prefix}${name}`;
    if (!principal.objectActions.size) {
      return {
        sql: `(${cols.owner} = :${n('User')}${insideSql})`,
        params: { [n('User')]: principal.userId },
      };
    }
    const params: Record<string, unknown> = {
      [n('Account')]: principal.accountId,
      [n('User')]: principal.userId,
      [n('Roles')]: principal.roleIds,
      [n('Groups')]: principal.groupIds,
      [n('Type')]: type,
      [n('Actions')]: actionsGranting(action),
    };
    const alternatives = [
      `(p.resource_type = :${n('Type')} AND p.action = ANY(:${n('Actions')}) AND p.resource_id = ${cols.id}::text)`,
    ];
    if (cols.workbookId) {
      params[n('WorkbookActions')] = actionsGrantingThrough('Workbook', type, action);
      alternatives.push(
        `(p.resource_type = 'Workbook' AND p.action = ANY(:${n('WorkbookActions')}) AND p.resource_id = ${cols.workbookId}::text)`,
      );
    }
    if (cols.folderChain) {
      params[n('FolderActions')] = actionsGrantingThrough('Folder', type, action);
      alternatives.push(
        `(p.resource_type = 'Folder' AND p.action = ANY(:${n('FolderActions')}) AND p.resource_id = ANY(${cols.folderChain}::text[]))`,
      );
    }
    return {
      sql: `(${cols.owner} = :${n('User')}${insideSql} OR EXISTS (SELECT 1 FROM policies p WHERE p.account_id = :${n('Account')}
        AND ((p.principal_type = 'user' AND p.principal_id = :${n('User')})
          OR (p.principal_type = 'role' AND p.principal_id = ANY(:${n('Roles')}))
          OR (p.principal_type = 'group' AND p.principal_id = ANY(:${n('Groups')})))
        AND (${alternatives.join(' OR ')})))`,
      params,
    };
  }
}
