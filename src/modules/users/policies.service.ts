import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { GrantableType } from '../../core/auth/access.service.js';
import { AccessService } from '../../core/auth/access.service.js';
import type { Principal } from '../../core/auth/principal.js';
import { ALL_RESOURCES, type PolicyDto, type PolicyResourceType } from './dto/policy.dto.js';
import { usersError } from './users.errors.js';

export type PrincipalType = 'role' | 'user' | 'group';

/** How a policy on every resource of its type is stored (`resource_id`): never an id. */
const EVERY = '*';

/** `All` (the reference's form) or `*` (accepted since the first version, for Global). */
const isEvery = (resource: string): boolean => resource === ALL_RESOURCES || resource === EVERY;

/** The rows of a policy: one `*` row for every resource of the type, else one per id. */
function storedResources(p: PolicyDto): string[] {
  return p.resourceType === 'Global' || p.resources.some(isEvery) ? [EVERY] : p.resources;
}

const GRANTABLE: ReadonlySet<string> = new Set<GrantableType>(['Deployment', 'Folder', 'Workbook', 'Report']);

interface GrantRow {
  principalId: number;
  resourceType: string;
  resourceId: string;
  action: string;
}

/**
 * Policies in the reference's shape (`resourceType`, `actions`, `resources`), stored one row per
 * (principal, resource, action) in `policies`.
 */
@Injectable()
export class PoliciesService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly access: AccessService,
  ) {}

  /** Checks types and that every referenced resource exists in the caller's account. */
  async validate(actor: Principal, policies: readonly PolicyDto[]): Promise<void> {
    for (const p of policies) {
      if (
        p.resourceType !== 'Global' &&
        (!GRANTABLE.has(p.resourceType) || !this.access.supports(p.resourceType as GrantableType))
      ) {
        throw usersError(
          'unsupported_resource_type',
          `resourceType ${p.resourceType} is not supported for grants yet; use Global, Deployment, Folder, Workbook or Report`,
        );
      }
      if (p.resourceType === 'Global') {
        if (!p.resources.every(isEvery)) {
          throw usersError('unknown_resource', 'Global policies take no resources other than ["All"]');
        }
        continue;
      }
      // Every resource of the type, those created later included: no id to check.
      if (p.resources.some(isEvery)) continue;
      const bad = p.resources.filter((r) => !/^[1-9]\d{0,9}$/.test(r) || Number(r) > 2_147_483_647);
      if (bad.length > 0 || p.resources.length === 0) {
        throw usersError(
          'unknown_resource',
          `${p.resourceType} policies need resource ids or ["All"]; invalid: ${bad.join(', ')}`,
        );
      }
      const ids = p.resources.map(Number);
      const found = await this.access.map({ ...actor, isAdmin: true }, p.resourceType as GrantableType, ids);
      const missing = ids.filter((id) => !found.exists(id));
      if (missing.length > 0) {
        throw usersError('unknown_resource', `${p.resourceType} not found: ${missing.join(', ')}`);
      }
    }
  }

  /** Replaces every policy row of one principal. Call inside a transaction. */
  async replace(
    manager: EntityManager,
    accountId: number,
    principalType: PrincipalType,
    principalId: number,
    policies: readonly PolicyDto[],
  ): Promise<void> {
    await manager.query(
      `DELETE FROM policies WHERE account_id = $1 AND principal_type = $2 AND principal_id = $3`,
      [accountId, principalType, principalId],
    );
    const rows = policies.flatMap((p) =>
      storedResources(p).flatMap((resource) =>
        p.actions.map((action) => [p.resourceType, resource, action] as const),
      ),
    );
    if (rows.length === 0) return;
    await manager.query(
      `INSERT INTO policies (account_id, principal_type, principal_id, resource_type, resource_id, action)
       SELECT $1, $2, $3, t.resource_type, t.resource_id, t.action
       FROM unnest($4::text[], $5::text[], $6::text[]) AS t(resource_type, resource_id, action)
       ON CONFLICT DO NOTHING`,
      [
        accountId,
        principalType,
        principalId,
        rows.map((r) => r[0]),
        rows.map((r) => r[1]),
        rows.map((r) => r[2]),
      ],
    );
  }

  /** The policies of each principal, grouped back into the reference's shape. */
  async read(
    accountId: number,
    principals: ReadonlyArray<{ type: PrincipalType; id: number }>,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<Map<string, PolicyDto[]>> {
    const out = new Map<string, PolicyDto[]>(principals.map((p) => [`${p.type}:${p.id}`, []]));
    if (principals.length === 0) return out;
    const rows: Array<GrantRow & { principalType: string }> = await manager.query(
      `SELECT principal_type AS "principalType", principal_id AS "principalId", resource_type AS "resourceType",
              resource_id AS "resourceId", action
       FROM policies
       WHERE account_id = $1 AND (principal_type, principal_id) IN (SELECT * FROM unnest($2::text[], $3::int[]))
       ORDER BY resource_type, resource_id, action`,
      [accountId, principals.map((p) => p.type), principals.map((p) => p.id)],
    );
    const grouped = new Map<string, GrantRow[]>();
    for (const row of rows) {
      const key = `${row.principalType}:${row.principalId}`;
      grouped.set(key, [...(grouped.get(key) ?? []), row]);
    }
    for (const [key, list] of grouped) out.set(key, group(list));
    return out;
  }
}

/** Rows to policies: resources of one type holding the same set of actions share a policy. */
function group(rows: readonly GrantRow[]): PolicyDto[] {
  const byResource = new Map<string, { type: string; resource: string; actions: string[] }>();
  for (const r of rows) {
    const key = `${r.resourceType}:${r.resourceId}`;
    const entry = byResource.get(key) ?? { type: r.resourceType, resource: r.resourceId, actions: [] };
    entry.actions.push(r.action);
    byResource.set(key, entry);
  }
  const policies = new Map<string, PolicyDto>();
  for (const { type, resource, actions } of byResource.values()) {
    const sorted = [...actions].sort();
    const key = `${type}|${sorted.join(',')}`;
    const policy = policies.get(key) ?? {
      resourceType: type as PolicyResourceType,
      actions: sorted,
      resources: [],
    };
    policy.resources.push(resource === EVERY ? ALL_RESOURCES : resource);
    policies.set(key, policy);
  }
  return [...policies.values()];
}
