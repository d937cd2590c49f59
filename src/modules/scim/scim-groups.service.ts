import { Injectable } from '@nestjs/common';
import type { Principal } from '../../core/auth/principal.js';
import { Database } from '../../core/database/database.js';
import type { ApiError } from '../../core/errors/api-error.js';
import { DirectoryService, type DirectoryGroup } from '../users/directory.service.js';
import { GroupsService } from '../users/groups.service.js';
import { matchesValue } from './filter/filter-eval.js';
import type { FilterNode } from './filter/filter-parser.js';
import { compileFilter, GROUP_FILTER_COLUMNS } from './filter/filter-sql.js';
import { planGroupPatch, type MemberStep } from './patch/group-patch.js';
import { applyOperation, normalizeResource } from './patch/patch-engine.js';
import { hasSchema, isObject, parsePatchRequest } from './patch/patch-request.js';
import {
  byKey,
  checkIfMatch,
  listResponse,
  parseResourceId,
  type ListQuery,
  type ListResponse,
} from './scim-http.js';
import { project, projects, type Projection } from './scim-projection.js';
import {
  groupAttributes,
  groupDocument,
  groupEtag,
  memberValues,
  toScimGroup,
  type GroupAttributes,
} from './scim-groups.mapper.js';
import { asUniqueness, type ScimResult } from './scim-users.service.js';
import { scimError } from './scim.errors.js';
import { GROUP_SCHEMA, URN } from './scim.schema.js';

function notFound(id: number): ApiError {
  return scimError('scim_not_found', `Group ${id} was not found`);
}

/**
 * SCIM Groups over the account-wide groups. Group rows and memberships are written through
 * `GroupsService`; membership changes are set operations, never a rewrite of the whole group.
 */
@Injectable()
export class ScimGroupsService {
  constructor(
    private readonly db: Database,
    private readonly directory: DirectoryService,
    private readonly groups: GroupsService,
  ) {}

  async list(actor: Principal, query: ListQuery, base: string): Promise<ListResponse> {
    const where = query.filter ? compileFilter(GROUP_FILTER_COLUMNS, query.filter) : null;
    const page = await this.directory.findGroups(actor.accountId, where, query.startIndex - 1, query.count);
    // Entra lists groups with excludedAttributes=members: then members are not even read.
    const members = projects(query.projection, 'members')
      ? byKey(
          await this.directory.membersOfGroups(
            actor.accountId,
            page.rows.map((g) => g.id),
          ),
          (m) => m.groupId,
        )
      : null;
    const resources = page.rows.map((g) =>
      project(toScimGroup(g, members ? (members.get(g.id) ?? []) : null, base), query.projection),
    );
    return listResponse(page.total, query.startIndex, resources);
  }

  async get(actor: Principal, id: number, base: string, projection: Projection): Promise<ScimResult> {
    return this.result(actor, id, base, projection);
  }

  async create(actor: Principal, body: unknown, base: string, projection: Projection): Promise<ScimResult> {
    const { attributes, members } = this.input(body);
    try {
      return await this.db.transaction(async () => {
        // The group row first: its insert share-locks the account row (foreign key), which user
        // writes lock for update before their user row. Locking the members first would take
        // the two in the opposite order and deadlock with a concurrent PATCH or DELETE of one.
        const created = await this.groups.create(actor, {
          name: attributes.name,
          description: null,
          externalId: attributes.externalId,
        });
        const userIds = await this.userIds(actor, members);
        if (userIds.length > 0) await this.groups.addMembers(actor, created.id, userIds);
        return this.result(actor, created.id, base, projection);
      });
    } catch (err) {
      throw asUniqueness(err);
    }
  }

  /** PUT: name, externalId and the whole membership replaced. */
  async replace(
    actor: Principal,
    id: number,
    body: unknown,
    ifMatch: string | undefined,
    base: string,
    projection: Projection,
  ): Promise<ScimResult> {
    const { attributes, members } = this.input(body);
    return this.write(actor, id, ifMatch, base, projection, async (groupId, current) => {
      const userIds = await this.userIds(actor, members);
      await this.groups.replaceMembers(actor, groupId, userIds);
      await this.stampIfChanged(actor, current, attributes, true);
    });
  }

  /** PATCH: attribute operations in memory, membership operations in SQL, all in one transaction. */
  async patch(
    actor: Principal,
    id: number,
    body: unknown,
    ifMatch: string | undefined,
    base: string,
    projection: Projection,
  ): Promise<ScimResult> {
    const plan = planGroupPatch(parsePatchRequest(body));
    return this.write(actor, id, ifMatch, base, projection, async (groupId, current) => {
      const doc = groupDocument(current);
      for (const operation of plan.attributeOps) applyOperation(doc, operation, GROUP_SCHEMA);
      const attributes = groupAttributes(doc);
      const added = plan.memberSteps.flatMap((s) =>
        s.kind === 'add' || s.kind === 'replace' ? s.values : [],
      );
      await this.userIds(actor, added);
      for (const step of plan.memberSteps) await this.applyStep(actor, groupId, step);
      await this.stampIfChanged(actor, current, attributes, plan.memberSteps.length > 0);
    });
  }

  /**
   * Writes the group's attributes, which stamps meta.lastModified, only when they or the
   * membership changed: a PUT or PATCH that changes nothing keeps the date and the version.
   */
  private async stampIfChanged(
    actor: Principal,
    current: DirectoryGroup,
    attributes: GroupAttributes,
    membersTouched: boolean,
  ): Promise<void> {
    let changed = attributes.name !== current.name || attributes.externalId !== current.externalId;
    if (!changed && membersTouched) {
      const after = await this.directory.getGroup(actor.accountId, current.id);
      changed = after?.membersDigest !== current.membersDigest;
    }
    if (changed) await this.groups.update(actor, current.id, attributes);
  }

  /** DELETE through `GroupsService.remove`, with `If-Match` compared on the locked row first. */
  async remove(actor: Principal, id: number, ifMatch: string | undefined): Promise<void> {
    await this.db.transaction(async () => {
      if (ifMatch !== undefined) {
        const group = await this.directory.lockGroup(actor.accountId, id);
        if (!group) throw notFound(id);
        checkIfMatch(ifMatch, groupEtag(group));
      }
      await this.groups.remove(actor, id);
    });
  }

  private async write(
    actor: Principal,
    id: number,
    ifMatch: string | undefined,
    base: string,
    projection: Projection,
    change: (id: number, current: DirectoryGroup) => Promise<void>,
  ): Promise<ScimResult> {
    try {
      return await this.db.transaction(async () => {
        const current = await this.directory.lockGroup(actor.accountId, id);
        if (!current) throw notFound(id);
        checkIfMatch(ifMatch, groupEtag(current));
        await change(id, current);
        return this.result(actor, id, base, projection);
      });
    } catch (err) {
      throw asUniqueness(err);
    }
  }

  /** One membership change, as a set operation. Values to add were checked by `userIds`. */
  private async applyStep(actor: Principal, groupId: number, step: MemberStep) {
    const ids = (values: string[]) => values.map(parseResourceId).filter((v): v is number => v !== null);
    switch (step.kind) {
      case 'add':
        if (step.values.length > 0) await this.groups.addMembers(actor, groupId, ids(step.values));
        return;
      case 'replace':
        await this.groups.replaceMembers(actor, groupId, ids(step.values));
        return;
      case 'remove':
        if (step.values.length > 0) {
          await this.groups.removeMembers(actor, groupId, ids(step.values));
        }
        return;
      case 'removeAll':
        await this.groups.removeMembers(actor, groupId, 'all');
        return;
      case 'removeWhere':
        await this.groups.removeMembers(actor, groupId, await this.selected(actor, groupId, step.filter));
    }
  }

  /** The members a `members[...]` filter selects: read straight from `value eq` filters, else evaluated. */
  private async selected(actor: Principal, groupId: number, filter: FilterNode): Promise<number[]> {
    const items = filter.kind === 'or' ? filter.items : [filter];
    const direct = items.every(
      (f) =>
        f.kind === 'compare' && f.op === 'eq' && f.path.sub === null && f.path.name.toLowerCase() === 'value',
    );
    const membersAttr = GROUP_SCHEMA.attributes.find((a) => a.name === 'members')!;
    if (direct) {
      // Evaluated all the same, so a value of the wrong type fails as in any other filter.
      const values = items.map((f) => (f.kind === 'compare' ? String(f.value) : ''));
      return values
        .filter((v) => matchesValue(filter, { value: v, type: 'User' }, membersAttr, 'invalidPath'))
        .map(parseResourceId)
        .filter((v): v is number => v !== null);
    }
    const members = await this.directory.membersOfGroups(actor.accountId, [groupId]);
    return members
      .filter((m) =>
        matchesValue(
          filter,
          { value: String(m.userId), display: m.userDisplay, type: 'User' },
          membersAttr,
          'invalidPath',
        ),
      )
      .map((m) => m.userId);
  }

  /**
   * The user ids of member values, share-locked: 400 invalidValue naming every value that is
   * not the id of a user of the account.
   */
  private async userIds(actor: Principal, values: readonly string[]): Promise<number[]> {
    const unique = [...new Set(values)];
    const parsed = unique.map((v) => ({ v, id: parseResourceId(v) }));
    const found = new Set(
      await this.directory.existingUserIds(
        actor.accountId,
        parsed.flatMap((p) => (p.id === null ? [] : [p.id])),
      ),
    );
    const missing = parsed.filter((p) => p.id === null || !found.has(p.id)).map((p) => JSON.stringify(p.v));
    if (missing.length > 0) {
      const shown =
        missing.slice(0, 20).join(', ') + (missing.length > 20 ? ` and ${missing.length - 20} more` : '');
      throw scimError('invalidValue', `members: not users of this account: ${shown}`);
    }
    return [...found];
  }

  /** The group as a resource, its members read only when the projection returns them. */
  private async result(
    actor: Principal,
    id: number,
    base: string,
    projection: Projection,
  ): Promise<ScimResult> {
    const group = await this.directory.getGroup(actor.accountId, id);
    if (!group) throw notFound(id);
    const members = projects(projection, 'members')
      ? await this.directory.membersOfGroups(actor.accountId, [id])
      : null;
    return { resource: toScimGroup(group, members, base), etag: groupEtag(group) };
  }

  /** A POST or PUT body: a Group resource, checked. */
  private input(body: unknown): { attributes: GroupAttributes; members: string[] } {
    if (!isObject(body)) throw scimError('invalidSyntax', 'The request body must be a Group JSON object');
    if (!hasSchema(body, URN.group)) throw scimError('invalidSyntax', `schemas must contain "${URN.group}"`);
    const doc = normalizeResource(body, GROUP_SCHEMA);
    return { attributes: groupAttributes(doc), members: memberValues(doc.members) };
  }
}
