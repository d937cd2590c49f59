import { AccessService } from '../../src/core/auth/access.service.js';
import { Action } from '../../src/core/auth/action.js';
import { AuthService } from '../../src/core/auth/auth.service.js';
import { DeploymentsService } from '../../src/modules/deployments/deployments.service.js';
import type { PolicyDto } from '../../src/modules/users/dto/policy.dto.js';
import type { GroupDto } from '../../src/modules/users/dto/group.dto.js';
import { GroupsService } from '../../src/modules/users/groups.service.js';
import { RolesService } from '../../src/modules/users/roles.service.js';
import { UsersService } from '../../src/modules/users/users.service.js';
import type { Actor } from '../support/app.js';
import { expectApiError, startServiceApp, type ServiceApp } from '../support/service.js';

const GLOBAL = (...actions: string[]): PolicyDto => ({ resourceType: 'Global', actions, resources: ['All'] });
const ON_DEPLOYMENT = (id: number, ...actions: string[]): PolicyDto => ({
  resourceType: 'Deployment',
  actions,
  resources: [String(id)],
});

/**
 * Access decisions: what a principal (built as the bearer guard builds it) holds through its
 * groups and their roles, and what `AccessService.map/requireAccess` decide on objects. The route
 * contracts (401/403/404 answers) stay in the e2e files. Moved from groups.e2e-part.
 */
describe('access through groups and roles', () => {
  let s: ServiceApp;
  let access: AccessService;
  let groups: GroupsService;
  let roles: RolesService;
  beforeAll(async () => {
    s = await startServiceApp();
    access = s.app.get(AccessService);
    groups = s.app.get(GroupsService);
    roles = s.app.get(RolesService);
  });
  afterAll(() => s.close());

  const admin = () => s.make.principal(s.admin);
  /** The member's rights as of now (a principal is a snapshot of one request). */
  const rights = (actor: Actor) => s.make.principal(actor);
  const join = async (group: GroupDto, actor: Actor) =>
    groups.addMembers(await admin(), group.id, [actor.userId]);
  const leave = async (group: GroupDto, actor: Actor) =>
    groups.removeMembers(await admin(), group.id, [actor.userId]);

  describe('members inherit the group’s roles and grants, at once', () => {
    let member: Actor;
    let group: GroupDto;
    beforeEach(async () => {
      member = await s.make.user();
      group = await s.make.group({ name: `Inheritance ${member.userId}` });
    });

    it('(a) a role with a Global policy: granted on joining, gone on leaving, role removal or group delete', async () => {
      const role = await s.make.role({ policies: [GLOBAL('DeploymentRead')] });
      await roles.assignToGroup(await admin(), role.id, group.id);
      const canList = async () => (await rights(member)).actions.has(Action.DeploymentRead);

      expect(await canList()).toBe(false);
      await join(group, member);
      expect(await canList()).toBe(true);
      const me = await s.app.get(UsersService).me(await rights(member));
      expect(me.userPolicies).toContainEqual(GLOBAL('DeploymentRead'));
      // Held through the group, not as a direct assignment.
      expect(await s.sql(`SELECT 1 FROM user_roles WHERE user_id = $1`, [member.userId])).toHaveLength(0);

      await leave(group, member);
      expect(await canList()).toBe(false);

      await join(group, member);
      expect(await canList()).toBe(true);
      await roles.unassignFromGroup(await admin(), role.id, group.id);
      expect(await canList()).toBe(false);

      await roles.assignToGroup(await admin(), role.id, group.id);
      expect(await canList()).toBe(true);
      await groups.remove(await admin(), group.id);
      expect(await canList()).toBe(false);
    });

    it('(b) a group Global policy: granted on joining, gone on leaving, on clearing it and on group delete', async () => {
      const canCreate = async () => (await rights(member)).actions.has(Action.DeploymentCreate);
      await s.make.grant({ type: 'group', id: group.id }, [GLOBAL('DeploymentCreate')]);

      expect(await canCreate()).toBe(false);
      await join(group, member);
      expect(await canCreate()).toBe(true);
      const made = await s.make.deployment({ name: 'By a group member', by: member });
      expect(made).toMatchObject({ name: 'By a group member' });

      await leave(group, member);
      expect(await canCreate()).toBe(false);

      await join(group, member);
      expect(await canCreate()).toBe(true);
      await s.make.grant({ type: 'group', id: group.id }, []);
      expect(await canCreate()).toBe(false);

      await s.make.grant({ type: 'group', id: group.id }, [GLOBAL('DeploymentCreate')]);
      expect(await canCreate()).toBe(true);
      await groups.remove(await admin(), group.id);
      expect(await canCreate()).toBe(false);
    });

    it('(c) a group grant on one deployment: that deployment only, until the member leaves', async () => {
      const granted = await s.make.deployment({ name: 'Group grant target' });
      const hidden = await s.make.deployment({ name: 'Group grant hidden' });
      await s.make.grant({ type: 'group', id: group.id }, [ON_DEPLOYMENT(granted.id, 'DeploymentRead')]);
      const readable = async () =>
        (await access.map(await rights(member), 'Deployment', [granted.id, hidden.id])).ids(
          Action.DeploymentRead,
        );

      expect(await readable()).toEqual([]);
      expect((await rights(member)).objectActions.has(Action.DeploymentRead)).toBe(false);

      await join(group, member);
      expect(await readable()).toEqual([granted.id]);
      const deployments = s.app.get(DeploymentsService);
      expect(await deployments.get(await rights(member), granted.id)).toMatchObject({
        id: granted.id,
        name: 'Group grant target',
      });
      await expectApiError(
        access.requireAccess(await rights(member), 'Deployment', hidden.id, Action.DeploymentRead),
        404,
        'deployment_not_found',
      );
      const listed = await deployments.list(await rights(member), {});
      expect(listed.items.map((d) => d.id)).toEqual([granted.id]);
      await expectApiError(
        access.requireAccess(await rights(member), 'Deployment', granted.id, Action.DeploymentUpdate),
        403,
        'forbidden',
      );

      await leave(group, member);
      expect(await readable()).toEqual([]);

      await join(group, member);
      expect(await readable()).toEqual([granted.id]);
      await groups.remove(await admin(), group.id);
      expect(await readable()).toEqual([]);
    });

    it('a role with an object-level policy reaches members through the group', async () => {
      const granted = await s.make.deployment({ name: 'Role via group' });
      const hidden = await s.make.deployment({ name: 'Role via group hidden' });
      const role = await s.make.role({ policies: [ON_DEPLOYMENT(granted.id, 'DeploymentRead')] });
      await roles.assignToGroup(await admin(), role.id, group.id);
      await join(group, member);
      const map = await access.map(await rights(member), 'Deployment', [granted.id, hidden.id]);
      expect(map.can(granted.id, Action.DeploymentRead)).toBe(true);
      expect(map.can(hidden.id, Action.DeploymentRead)).toBe(false);
      const listed = await s.app.get(DeploymentsService).list(await rights(member), {});
      expect(listed.items.map((d) => d.id)).toEqual([granted.id]);
      await leave(group, member);
      expect(
        (await access.map(await rights(member), 'Deployment', [granted.id])).ids(Action.DeploymentRead),
      ).toEqual([]);
    });

    it('a group Global All policy makes its members admins, and only while they are members', async () => {
      await s.make.grant({ type: 'group', id: group.id }, [GLOBAL('All')]);
      expect((await rights(member)).isAdmin).toBe(false);
      await join(group, member);
      const asMember = await rights(member);
      expect(asMember.isAdmin).toBe(true);
      // Admins of the account manage groups, including removing themselves from this one.
      await groups.removeMembers(asMember, group.id, [member.userId]);
      expect((await rights(member)).isAdmin).toBe(false);
    });

    it("another group's grants do not leak to non-members", async () => {
      const bystander = await s.make.user();
      await s.make.grant({ type: 'group', id: group.id }, [GLOBAL('DeploymentRead')]);
      await join(group, member);
      expect((await rights(member)).actions.has(Action.DeploymentRead)).toBe(true);
      const theirs = await rights(bystander);
      expect(theirs.actions.has(Action.DeploymentRead)).toBe(false);
      expect(theirs.groupIds).toEqual([]);
    });

    it('a role or status change empties this process’s cache at commit, without waiting for NOTIFY', async () => {
      // With the triggers off, no notification comes: only the writer's own invalidation can work.
      await s.sql(`ALTER TABLE users DISABLE TRIGGER USER`);
      try {
        const user = await s.make.user();
        expect(await s.app.get(AuthService).authenticate(user.token)).not.toBeNull();
        await s.app.get(UsersService).update(await admin(), user.userId, { isDeactivated: true });
        expect(await s.app.get(AuthService).authenticate(user.token)).toBeNull();
      } finally {
        await s.sql(`ALTER TABLE users ENABLE TRIGGER USER`);
      }
    });

    it('a deactivated member is not authenticated, whatever their groups grant', async () => {
      await s.make.grant({ type: 'group', id: group.id }, [GLOBAL('DeploymentRead')]);
      await join(group, member);
      expect((await rights(member)).actions.has(Action.DeploymentRead)).toBe(true);
      await s.app.get(UsersService).update(await admin(), member.userId, { isDeactivated: true });
      expect(await s.app.get(AuthService).authenticate(member.token)).toBeNull();
    });
  });
});
