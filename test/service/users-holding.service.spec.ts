import { AccessService } from '../../src/core/auth/access.service.js';
import { Action } from '../../src/core/auth/action.js';
import type { PolicyDto } from '../../src/modules/users/dto/policy.dto.js';
import { RolesService } from '../../src/modules/users/roles.service.js';
import { UsersService } from '../../src/modules/users/users.service.js';
import type { Actor } from '../support/app.js';
import { startServiceApp, type ServiceApp } from '../support/service.js';

const ON_DEPLOYMENT = (id: number, ...actions: string[]): PolicyDto => ({
  resourceType: 'Deployment',
  actions,
  resources: [String(id)],
});

/**
 * `AccessService.usersHolding`: which users, other than the caller, hold an action on a resource
 * now (the merge gate counts reviewers with it, docs/data-model.md "Reviews and the merge gate").
 * It must decide as a request of each user would: checked here against `requireAccess` with the
 * principal the bearer guard builds for them.
 */
describe('users holding an action on a resource', () => {
  let s: ServiceApp;
  let access: AccessService;
  let deployment: number;
  let otherDeployment: number;
  const users: Record<string, Actor> = {};

  beforeAll(async () => {
    s = await startServiceApp();
    access = s.app.get(AccessService);
    deployment = (await s.make.deployment()).id;
    otherDeployment = (await s.make.deployment()).id;
    users.developer = await s.make.user({ role: 'Developer' });
    users.viewer = await s.make.user({ role: 'AIBIViewer' });
    users.nobody = await s.make.user();
    // A grant on this deployment only, through a custom role held directly.
    const here = await s.make.role({
      policies: [ON_DEPLOYMENT(deployment, 'SchemaUpdate', 'DeploymentRead')],
    });
    users.granted = await s.make.user();
    await s.app.get(RolesService).assign(await s.make.principal(s.admin), here.id, users.granted.userId);
    // The same grant on the other deployment only.
    users.elsewhere = await s.make.user();
    await s.make.grant(users.elsewhere, [ON_DEPLOYMENT(otherDeployment, 'SchemaUpdate', 'DeploymentRead')]);
    // SchemaUpdate through a role of a group, and a grant to the group itself.
    users.member = await s.make.user();
    const group = await s.make.group({ members: [users.member] });
    await s.app.get(RolesService).assignToGroup(await s.make.principal(s.admin), here.id, group.id);
    users.groupGrant = await s.make.user();
    const granted = await s.make.group({ members: [users.groupGrant] });
    await s.make.grant({ type: 'group', id: granted.id }, [
      ON_DEPLOYMENT(deployment, 'SchemaUpdate', 'DeploymentRead'),
    ]);
    // A developer, deactivated.
    users.deactivated = await s.make.user({ role: 'Developer' });
    users.stranger = await s.make.user({ role: 'Developer', in: await s.make.account() });
  });
  afterAll(() => s.close());

  const decidedByRequests = async (action: Action, resource: number): Promise<number[]> => {
    const held: number[] = [];
    for (const actor of [s.admin, ...Object.values(users)]) {
      if (actor === users.deactivated || actor === users.stranger) continue;
      const principal = await s.make.principal(actor);
      if (principal.accountId !== s.admin.accountId) continue;
      const ok = await access.requireAccess(principal, 'Deployment', resource, action).then(
        () => true,
        () => false,
      );
      if (ok) held.push(actor.userId);
    }
    return held.sort((a, b) => a - b);
  };

  it('answers the users holding the action now, as their own requests would be decided', async () => {
    await s.app
      .get(UsersService)
      .setDeactivated(await s.make.principal(s.admin), users.deactivated.userId, true);
    const ids = [s.admin, ...Object.values(users)].map((u) => u.userId);
    for (const [action, resource] of [
      [Action.SchemaUpdate, deployment],
      [Action.SchemaUpdate, otherDeployment],
      [Action.SchemaRead, deployment],
      [Action.DeploymentRead, deployment],
    ] as const) {
      const held = await access.usersHolding(s.admin.accountId, 'Deployment', resource, action, ids);
      expect({ action, resource, held: [...held].sort((a, b) => a - b) }).toEqual({
        action,
        resource,
        held: await decidedByRequests(action, resource),
      });
    }
    const schemaUpdate = await access.usersHolding(
      s.admin.accountId,
      'Deployment',
      deployment,
      Action.SchemaUpdate,
      ids,
    );
    expect(schemaUpdate).toEqual(
      new Set([
        s.admin.userId,
        users.developer.userId,
        users.granted.userId,
        users.member.userId,
        users.groupGrant.userId,
      ]),
    );
  });

  it('leaves out deactivated users, other accounts’ users and unknown ids, and answers nothing for none', async () => {
    const held = await access.usersHolding(s.admin.accountId, 'Deployment', deployment, Action.SchemaRead, [
      users.deactivated.userId,
      users.stranger.userId,
      2_000_000_000,
    ]);
    expect(held).toEqual(new Set());
    expect(
      await access.usersHolding(s.admin.accountId, 'Deployment', deployment, Action.SchemaRead, []),
    ).toEqual(new Set());
  });

  it('follows a change of roles at once', async () => {
    const developer = users.developer.userId;
    const holds = async () =>
      (
        await access.usersHolding(s.admin.accountId, 'Deployment', deployment, Action.SchemaUpdate, [
          developer,
        ])
      ).has(developer);
    expect(await holds()).toBe(true);
    await s.app
      .get(UsersService)
      .update(await s.make.principal(s.admin), developer, { defaultRoles: ['AIBIViewer'] });
    expect(await holds()).toBe(false);
  });
});
