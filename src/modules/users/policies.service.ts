import { Injectable } from '@nestjs/common';
import type { GrantableType } from '../../core/auth/access.service.js';
import { AccessService } from '../../core/auth/access.service.js';
import type { GrantPrincipal, GrantRow } from '../../core/auth/access.service.js';
import type { Principal } from '../../core/auth/principal.js';
import { ALL_RESOURCES, type PolicyDto, type PolicyResourceType } from './dto/policy.dto.js';
import { usersError } from './users.errors.js';

export type PrincipalType = GrantPrincipal['type'];

/** How a policy on every resource of its type is stored (`resource_id`): never an id. */
const EVERY = '*';

/** `All` (the reference's form) or `*` (accepted since the first version, for Global). */
const isEvery = (resource: string): boolean => resource === ALL_RESOURCES || resource === EVERY;

/** The rows of a policy: one `*` row for every resource of the type, else one per id. */
function storedResources(p: PolicyDto): string[] {
  return p.resourceType === 'Global' || p.resources.some(isEvery) ? [EVERY] : p.resources;
}

const GRANTABLE: ReadonlySet<string> = new Set<GrantableType>(['Deployment', 'Folder', 'Workbook', 'Report']);

/**
 * Policies in the reference's shape (`resourceType`, `actions`, `resources`), stored by core/auth
 * (`AccessService`) one grant per (principal, resource, action).
 */
@Injectable()
export class PoliciesService {
  constructor(private readonly access: AccessService) {}

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

  /** Replaces every policy of one principal, inside the caller's unit of work. */
  async replace(accountId: number, principal: GrantPrincipal, policies: readonly PolicyDto[]): Promise<void> {
    const grants = policies.flatMap((p) =>
      storedResources(p).flatMap((resourceId) =>
        p.actions.map((action): GrantRow => ({ resourceType: p.resourceType, resourceId, action })),
      ),
    );
    await this.access.replaceGrants(accountId, principal, grants);
  }

  /** The policies of each principal, grouped back into the reference's shape. */
  async read(
    accountId: number,
    principals: ReadonlyArray<{ type: PrincipalType; id: number }>,
  ): Promise<Map<string, PolicyDto[]>> {
    const out = new Map<string, PolicyDto[]>(principals.map((p) => [`${p.type}:${p.id}`, []]));
    if (principals.length === 0) return out;
    const rows = await this.access.grantsOf(accountId, principals);
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
