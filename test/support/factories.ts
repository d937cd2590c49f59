import { randomBytes } from 'node:crypto';
import type { INestApplicationContext } from '@nestjs/common';
import { BUILT_IN_ROLE_NAMES } from '../../src/core/auth/action.js';
import { AuthService } from '../../src/core/auth/auth.service.js';
import type { Principal } from '../../src/core/auth/principal.js';
import type { CreateDeploymentDto, DeploymentDto } from '../../src/modules/deployments/dto/deployment.dto.js';
import { DeploymentsService } from '../../src/modules/deployments/deployments.service.js';
import { AccountsService } from '../../src/modules/users/accounts.service.js';
import { ApiKeysService } from '../../src/modules/users/api-keys.service.js';
import type { ApiKeyCreatedDto } from '../../src/modules/users/dto/api-key.dto.js';
import type { GroupDto } from '../../src/modules/users/dto/group.dto.js';
import type { PolicyDto } from '../../src/modules/users/dto/policy.dto.js';
import type { RoleDto } from '../../src/modules/users/dto/role.dto.js';
import type { UserCreateDto, UserDto } from '../../src/modules/users/dto/user.dto.js';
import { GroupsService } from '../../src/modules/users/groups.service.js';
import { RolesService } from '../../src/modules/users/roles.service.js';
import { UsersService } from '../../src/modules/users/users.service.js';
import type { FolderDto } from '../../src/modules/workspace/dto/folder.dto.js';
import type { WorkbookDto } from '../../src/modules/workspace/dto/workbook.dto.js';
import { FoldersService } from '../../src/modules/workspace/folders.service.js';
import { WorkbooksService } from '../../src/modules/workspace/workbooks.service.js';
import { bearer, type Actor, type TestApp } from './app.js';

/** A valid body for `POST /build/api/v1/deployments`; override any field. */
export function deploymentInput(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'Sales analytics',
    cloudProvider: 'aws',
    isManaged: true,
    region: 'aws-us-east-1',
    targetPlatform: 'cubecloud',
    creationStep: 'ready',
    ...overrides,
  };
}

/**
 * Creates a deployment through the API, as a client does (`deploymentInput` with `overrides`),
 * and answers its `{id, name, deploymentUrl, creationStep}`; throws on anything but 200.
 */
export async function postDeployment(
  t: TestApp,
  actor: Actor,
  overrides: Record<string, unknown> = {},
): Promise<DeploymentDto> {
  const res = await t
    .http()
    .post('/build/api/v1/deployments')
    .set(bearer(actor.token))
    .send(deploymentInput(overrides));
  if (res.status !== 200)
    throw new Error(`could not create a deployment: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as DeploymentDto;
}

/** Polls `probe` until `done` holds or the time is up; returns the last value for the assertion. */
export async function waitFor<T>(
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 10_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await probe();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, intervalMs));
    value = await probe();
  }
  return value;
}

/**
 * Typed test data, created the way the application creates it: through the exported services of
 * the modules (their `(principal, dto)` methods), never by writing rows behind their back. Each
 * factory fills in what a test does not care about with unique values, so tests never collide
 * on names, and returns what the service returned.
 *
 * Works on the service tier (`startServiceApp().make`) and on an HTTP test app
 * (`new Factories(t.app, t.admin)`): both are the same application.
 */
export class Factories {
  private readonly accounts = new Map<number, Actor>();

  constructor(
    private readonly app: INestApplicationContext,
    /** The account admin that acts for the factories unless told otherwise. */
    readonly admin: Actor,
  ) {
    this.accounts.set(admin.accountId, admin);
  }

  /**
   * The principal of an actor, built as the bearer guard builds it for a request. It is a
   * snapshot: take a new one after changing the actor's roles, groups or grants.
   */
  async principal(actor: Actor): Promise<Principal> {
    const principal = await this.app.get(AuthService).authenticate(actor.token);
    if (!principal) throw new Error(`the token of ${actor.email} does not authenticate`);
    return principal;
  }

  /** Another account with its own admin, made the way `npm run cli -- bootstrap` makes it. */
  async account(slug = `acct${unique()}`): Promise<Actor> {
    const email = `admin@${slug}.test`;
    const identity = await this.app.get(AccountsService).bootstrap(slug, email);
    const actor = { ...identity, slug, email };
    this.accounts.set(actor.accountId, actor);
    return actor;
  }

  /**
   * A console user with a token of their own. `role` is a built-in role (`'Admin'` makes an admin);
   * `roles` lists several; without either the user has no built-in role at all. `in` is the
   * admin of the account to create them in (default: the factories' admin).
   */
  async user(
    fields: {
      role?: BuiltInRoleName;
      roles?: BuiltInRoleName[];
      email?: string;
      username?: string;
      firstName?: string | null;
      in?: Actor;
    } = {},
  ): Promise<TestUser> {
    const admin = fields.in ?? this.admin;
    const email = fields.email ?? `u${unique()}@${admin.slug}.test`;
    const dto: UserCreateDto = {
      email,
      username: fields.username ?? email,
      firstName: fields.firstName,
      defaultRoles: fields.roles ?? (fields.role ? [fields.role] : []),
    };
    const user = await this.app.get(UsersService).create(await this.principal(admin), dto);
    const { token } = await this.app.get(AccountsService).token(admin.slug, user.email);
    return { token, userId: user.id, accountId: admin.accountId, slug: admin.slug, email: user.email, user };
  }

  /** An API key of `owner` (default: the admin); the token is in the answer, as at creation. */
  async apiKey(
    owner: Actor = this.admin,
    fields: { name?: string; expiresAt?: string | null } = {},
  ): Promise<ApiKeyCreatedDto> {
    return this.app
      .get(ApiKeysService)
      .create(await this.principal(owner), { name: fields.name ?? `key ${unique()}`, ...fields });
  }

  /** A custom role with its policies (none by default). */
  async role(fields: { name?: string; policies?: PolicyDto[]; by?: Actor } = {}): Promise<RoleDto> {
    return this.app.get(RolesService).create(await this.principal(fields.by ?? this.admin), {
      name: fields.name ?? `Role ${unique()}`,
      policies: fields.policies ?? [],
    });
  }

  /** A group with its members (none by default). */
  async group(
    fields: { name?: string; description?: string | null; members?: Actor[]; by?: Actor } = {},
  ): Promise<GroupDto> {
    const principal = await this.principal(fields.by ?? this.admin);
    const groups = this.app.get(GroupsService);
    const group = await groups.create(principal, {
      name: fields.name ?? `Group ${unique()}`,
      description: fields.description,
    });
    if (fields.members?.length) {
      await groups.addMembers(
        principal,
        group.id,
        fields.members.map((m) => m.userId),
      );
      return groups.get(principal, group.id);
    }
    return group;
  }

  /** Replaces the direct policies of a user, a role or a group (as `PUT .../policies` does). */
  async grant(to: GrantTarget, policies: PolicyDto[], by: Actor = this.admin): Promise<void> {
    const principal = await this.principal(by);
    const dto = { policies };
    if ('userId' in to) await this.app.get(UsersService).replacePolicies(principal, to.userId, dto);
    else if (to.type === 'role') await this.app.get(RolesService).update(principal, to.id, { policies });
    else await this.app.get(GroupsService).replacePolicies(principal, to.id, dto);
  }

  /** A deployment of the creator's account (default: the admin). */
  async deployment(fields: Partial<CreateDeploymentDto> & { by?: Actor } = {}): Promise<DeploymentDto> {
    const { by, ...overrides } = fields;
    const dto = deploymentInput({
      name: `Deployment ${unique()}`,
      ...overrides,
    }) as unknown as CreateDeploymentDto;
    return this.app.get(DeploymentsService).create(await this.principal(by ?? this.admin), dto);
  }

  /** A folder of a deployment, at the root or in `parentId`, owned by its creator. */
  async folder(
    deploymentId: number,
    fields: { name?: string; parentId?: number; by?: Actor } = {},
  ): Promise<FolderDto> {
    return this.app.get(FoldersService).create(await this.principal(fields.by ?? this.admin), deploymentId, {
      name: fields.name ?? `Folder ${unique()}`,
      parentId: fields.parentId,
    });
  }

  /** A workbook of a deployment, at the root or in `folderId`, owned by its creator. */
  async workbook(
    deploymentId: number,
    fields: { name?: string; folderId?: number; by?: Actor } = {},
  ): Promise<WorkbookDto> {
    return this.app
      .get(WorkbooksService)
      .create(await this.principal(fields.by ?? this.admin), deploymentId, {
        name: fields.name ?? `Workbook ${unique()}`,
        folderId: fields.folderId,
      });
  }
}

/** A user made by {@link Factories.user}: an actor with the service's answer. */
export interface TestUser extends Actor {
  user: UserDto;
}

export type GrantTarget = Actor | { type: 'role' | 'group'; id: number };

export type BuiltInRoleName = (typeof BUILT_IN_ROLE_NAMES)[number];

let counter = 0;
/** Unique within a run: the process id and a counter (tests of one file share a database). */
function unique(): string {
  counter += 1;
  return `${process.pid.toString(36)}${counter.toString(36)}${randomBytes(2).toString('hex')}`;
}
