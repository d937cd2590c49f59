import { Injectable } from '@nestjs/common';
import { AccessService, type GrantableType, type GrantPrincipal } from '../../core/auth/access.service.js';
import type { Principal } from '../../core/auth/principal.js';
import { Database } from '../../core/database/database.js';
import { notFound } from '../../core/errors/not-found.js';
import type { PolicyResourceType } from './dto/policy.dto.js';
import type {
  ResourcePoliciesDto,
  ResourcePolicyQueryDto,
  SetGroupResourcePolicyDto,
  SetUserResourcePolicyDto,
} from './dto/resource-policy.dto.js';
import { GroupsRepository } from './groups.repository.js';
import { UsersRepository } from './users.repository.js';
import { usersError } from './users.errors.js';

/** The types that carry object-level grants (`Global` aside), as the users' and groups' policies take them. */
const GRANTABLE: ReadonlySet<string> = new Set<GrantableType>(['Deployment', 'Folder', 'Workbook', 'Report']);

/** One resource as the grants store names it: `*` for Global, else its id. */
interface ResourceRef {
  type: PolicyResourceType;
  id: number;
  stored: string;
}

/**
 * The policies of one resource, seen from the resource (`/resource-policies/`): the same grants
 * the users' and groups' policies (`/users/{id}/policies`, `/groups/{id}/policies`) hold, stored by
 * core/auth one per (principal, resource, action). Setting a principal's policy on a resource
 * replaces its grants on that resource only; its grants elsewhere stay.
 */
@Injectable()
export class ResourcePoliciesService {
  constructor(
    private readonly db: Database,
    private readonly access: AccessService,
    private readonly users: UsersRepository,
    private readonly groups: GroupsRepository,
  ) {}

  async get(actor: Principal, query: ResourcePolicyQueryDto): Promise<ResourcePoliciesDto> {
    const ref = await this.resolve(actor, query.resourceType, query.resourceId);
    return this.read(actor.accountId, ref);
  }

  async setUser(actor: Principal, dto: SetUserResourcePolicyDto): Promise<ResourcePoliciesDto> {
    const ref = await this.resolve(actor, dto.resourceType, dto.resourceId);
    return this.db.transaction(async () => {
      // Locked, as `PUT /users/{id}/policies` locks it: changes of one user's grants run one after the other.
      if (!(await this.users.find(actor.accountId, dto.userId, true))) throw notFound('User', dto.userId);
      await this.set(actor.accountId, { type: 'user', id: dto.userId }, ref, dto.action ?? null);
      return this.read(actor.accountId, ref);
    });
  }

  async setGroup(actor: Principal, dto: SetGroupResourcePolicyDto): Promise<ResourcePoliciesDto> {
    const ref = await this.resolve(actor, dto.resourceType, dto.resourceId);
    return this.db.transaction(async () => {
      if (!(await this.groups.lock(actor.accountId, dto.groupId, 'FOR NO KEY UPDATE'))) {
        throw notFound('Group', dto.groupId);
      }
      await this.set(actor.accountId, { type: 'group', id: dto.groupId }, ref, dto.action ?? null);
      return this.read(actor.accountId, ref);
    });
  }

  /** The resource, or 400 for a type without grants and 404 for one not in the caller's account. */
  private async resolve(actor: Principal, type: PolicyResourceType, id: number): Promise<ResourceRef> {
    if (type === 'Global') return { type, id, stored: '*' };
    if (!GRANTABLE.has(type) || !this.access.supports(type as GrantableType)) {
      throw usersError(
        'unsupported_resource_type',
        `resourceType ${type} carries no grants here; use Global, Deployment, Folder, Workbook or Report`,
      );
    }
    const grantable = type as GrantableType;
    const found = await this.access.map({ ...actor, isAdmin: true }, grantable, [id]);
    if (!found.exists(id)) throw notFound(grantable, id);
    return { type, id, stored: String(id) };
  }

  /** Replaces what `principal` holds on the resource with `action` (nothing for null); the rest stays. */
  private async set(
    accountId: number,
    principal: GrantPrincipal,
    ref: ResourceRef,
    action: string | null,
  ): Promise<void> {
    const held = await this.access.grantsOf(accountId, [principal]);
    const grants = held
      .filter((g) => !(g.resourceType === ref.type && g.resourceId === ref.stored))
      .map(({ resourceType, resourceId, action: a }) => ({ resourceType, resourceId, action: a }));
    if (action !== null) grants.push({ resourceType: ref.type, resourceId: ref.stored, action });
    await this.access.replaceGrants(accountId, principal, grants);
  }

  private async read(accountId: number, ref: ResourceRef): Promise<ResourcePoliciesDto> {
    const rows = await this.access.grantsOn(accountId, ref.type, ref.stored);
    const of = (type: 'user' | 'group') => {
      const byId = new Map<number, string[]>();
      for (const r of rows) {
        if (r.principalType !== type) continue;
        byId.set(r.principalId, [...(byId.get(r.principalId) ?? []), r.action]);
      }
      return [...byId].sort(([a], [b]) => a - b);
    };
    return {
      resourceType: ref.type,
      resourceId: ref.id,
      userPolicies: of('user').map(([userId, actions]) => ({ userId, actions: actions.sort() })),
      groupPolicies: of('group').map(([groupId, actions]) => ({ groupId, actions: actions.sort() })),
    };
  }
}
