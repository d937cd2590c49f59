import { Redis } from 'ioredis';
import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  type Actor,
  type TestApp,
} from '../support/app.js';
import { REDIS_URL } from '../support/database.js';
import { deploymentInput } from '../support/factories.js';
import { STARTER_COUNT_RENAMED } from '../support/starter-model.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers */
type Json = Record<string, any>;
interface Res {
  status: number;
  body: any;
}

/**
 * Reviews and the merge gate of the deploy branch (docs/data-model.md, "Reviews and the merge
 * gate") through HTTP: reviews recorded, replaced, refused to the change's authors, dismissed when
 * the branch moves, counted in the branch list, safe in parallel; the gate's settings on the
 * deployment, its refusals naming what is missing, who counts, request for changes, the admin
 * override in the audit log; merges with no gate as before; and the acceptance scenario
 * with real compiles (a renamed measure that a report and a notification use).
 *
 * A part of model-review.e2e-spec.ts: its own describes, apps and databases.
 */
describe('reviews and the merge gate', () => {
  let t: TestApp;
  let id: number;
  let author: Actor;
  let alice: Actor;
  let bob: Actor;
  /** Holds SchemaUpdate on this deployment only, through a role's grant on it. */
  let carol: Actor;
  let dave: Actor;
  /** SchemaRead and SchemaUpdateDevBranches: may work on branches, not review or merge into the deploy branch. */
  let devOnly: Actor;
  /** SchemaRead only. */
  let reader: Actor;
  let viewer: Actor;
  let other: Actor;
  let otherDeployment: number;
  let devBranch: string;
  let counter = 0;

  const build = (path: string, deployment = id) => `/build/api/v1/deployments/${deployment}${path}`;
  const as = (actor: Actor = t.admin) => bearer(actor.token);
  const post = (path: string, body: Json, actor: Actor): Promise<Res> =>
    t
      .http()
      .post(build(path))
      .set(as(actor))
      .send(body)
      .then((r) => r);
  const get = (path: string, query: Json, actor: Actor): Promise<Res> =>
    t
      .http()
      .get(build(path))
      .query(query)
      .set(as(actor))
      .then((r) => r);
  const ok = async (req: Promise<Res>, status = 200): Promise<any> => {
    const res = await req;
    if (res.status !== status)
      throw new Error(`expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const refused = async (req: Promise<Res>, status: number, code: string): Promise<string> => {
    const res = await req;
    expect({ status: res.status, code: res.body?.code as unknown }).toEqual({ status, code });
    expectErrorShape(res.body, status, code);
    return String(res.body.message);
  };
  const review = (branchName: string, verdict: string, actor: Actor, comment?: string) =>
    post('/branches/reviews', { branchName, verdict, ...(comment === undefined ? {} : { comment }) }, actor);
  const reviews = async (branchName: string, actor: Actor = reader): Promise<Json[]> =>
    (await ok(get('/branches/reviews', { branchName }, actor))).items;
  const branchItem = async (name: string): Promise<Json> => {
    const page = await ok(get('/branches', { first: 1000 }, reader));
    return page.items.find((b: Json) => b.name === name);
  };
  const headOf = async (name: string): Promise<string> => (await branchItem(name)).lastHash;
  /** A new commit on `branch`, the actor's active dev branch (a file of its own each time); its head. */
  const commit = async (branch: string = devBranch, actor: Actor = author): Promise<string> => {
    counter += 1;
    await ok(
      t
        .http()
        .put(build('/data-model/files'))
        .set(as(actor))
        .send({ files: [{ path: `/notes/change-${counter}.txt`, content: `change ${counter}\n` }] }),
    );
    await ok(post('/commit', { message: `Change ${counter}` }, actor));
    return headOf(branch);
  };
  const leaveDevMode = (actor: Actor) =>
    ok(
      t
        .http()
        .delete(build('/dev-mode'))
        .set(as(actor))
        .then((r) => r),
    );
  const setGate = (settings: Json) => ok(t.http().put(`/api/v1/deployments/${id}`).set(as()).send(settings));
  const userWithPolicies = async (policies: Json[]): Promise<Actor> => {
    const role = await ok(
      t
        .http()
        .post('/api/v1/roles')
        .set(as())
        .send({ name: `r${Math.random().toString(36).slice(2, 8)}`, policies }),
    );
    const user = await newUser(t, t.admin);
    await ok(t.http().put(`/api/v1/roles/${role.id}/users/${user.userId}`).set(as()).send({}), 204);
    return user;
  };
  const auditEvents = async (query: Json): Promise<Json[]> =>
    (await ok(t.http().get('/api/v1/audit-log').query(query).set(as()))).items;

  beforeAll(async () => {
    t = await startApp({ QUEUE_STALL_SECONDS: '3600' });
    other = await newAccount(t, 'globex');
    otherDeployment = (
      await ok(t.http().post('/build/api/v1/deployments').set(as(other)).send(deploymentInput()))
    ).id;
    id = (await ok(t.http().post('/build/api/v1/deployments').set(as()).send(deploymentInput()))).id;
    [author, alice, bob, dave, viewer] = await Promise.all(
      [
        { email: 'author@acme.test', defaultRoles: ['Developer'] },
        { email: 'alice@acme.test', defaultRoles: ['Developer'] },
        { email: 'bob@acme.test', defaultRoles: ['Developer'] },
        { email: 'dave@acme.test', defaultRoles: ['Developer'] },
        { defaultRoles: ['AIBIViewer'] },
      ].map((fields) => newUser(t, t.admin, fields)),
    );
    carol = await userWithPolicies([
      { resourceType: 'Deployment', actions: ['SchemaUpdate', 'DeploymentRead'], resources: [String(id)] },
    ]);
    devOnly = await userWithPolicies([
      { resourceType: 'Global', actions: ['SchemaUpdateDevBranches', 'DeploymentRead'], resources: ['All'] },
    ]);
    reader = await userWithPolicies([
      { resourceType: 'Global', actions: ['SchemaRead', 'DeploymentRead'], resources: ['All'] },
    ]);
    await ok(t.http().put('/api/v1/tenant/settings').set(as()).send({ auditLogEnabled: true }));
    devBranch = (await ok(post('/dev-mode', {}, author))).branchName;
  });
  afterAll(() => t?.close());

  describe('with no gate set', () => {
    it('reads the gate settings off on the deployment, and merges as before', async () => {
      const settings = await ok(t.http().get(`/api/v1/deployments/${id}/settings`).set(as(reader)));
      expect(settings).toMatchObject({
        deployBranchRequiredApprovals: 0,
        deployBranchBlockNewBrokenContent: false,
      });
      const start = await headOf('master');
      await commit();
      // Nobody reviewed it: with no gate, merging into the deploy branch works as it always did.
      expect(await ok(post('/merge', { message: 'No gate' }, author))).toEqual({
        merged: true,
        branchDeleted: false,
      });
      const merged = await headOf('master');
      expect(merged).not.toBe(start);
      await commit();
      expect(
        await ok(post('/merge-to-default', { branchName: devBranch, message: 'No gate either' }, author)),
      ).toEqual({ merged: true, branchDeleted: false });
      expect(await headOf('master')).not.toBe(merged);
      // A request for changes does not block while no gate is set.
      const next = await commit();
      await ok(review(devBranch, 'request_changes', alice, 'Not this'));
      expect(await ok(post('/merge', {}, author))).toEqual({ merged: true, branchDeleted: false });
      expect((await reviews(devBranch)).find((r) => r.headCommit === next)).toMatchObject({
        verdict: 'request_changes',
        dismissed: false,
      });
    });
  });

  describe('reviews', () => {
    let head: string;
    beforeAll(async () => {
      head = await commit();
    });

    it('records a review of the branch head, lists it, and counts it with the branch', async () => {
      const body = await ok(review(devBranch, 'approve', alice, 'Looks right'));
      expect(body).toEqual({
        id: expect.any(Number),
        branchName: devBranch,
        headCommit: head,
        reviewer: { id: alice.userId, email: 'alice@acme.test' },
        verdict: 'approve',
        comment: 'Looks right',
        createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        dismissed: false,
      });
      expect(await reviews(devBranch)).toContainEqual(body);
      expect(await branchItem(devBranch)).toMatchObject({
        lastHash: head,
        approvals: 1,
        changesRequested: 0,
      });
      expect(await branchItem('master')).toMatchObject({ approvals: 0, changesRequested: 0 });
    });

    it("replaces the reviewer's review of the same head, and counts each reviewer once", async () => {
      const first = (await reviews(devBranch)).find(
        (r) => r.headCommit === head && r.reviewer.id === alice.userId,
      )!;
      const replaced = await ok(review(devBranch, 'request_changes', alice, 'On second thought'));
      expect(replaced).toMatchObject({
        verdict: 'request_changes',
        comment: 'On second thought',
        dismissed: false,
      });
      // A new review, with a new id: the one it replaced is gone.
      expect(replaced.id).toBeGreaterThan(first.id);
      const mine = (await reviews(devBranch)).filter(
        (r) => r.headCommit === head && r.reviewer.id === alice.userId,
      );
      expect(mine).toEqual([replaced]);
      expect(await branchItem(devBranch)).toMatchObject({ approvals: 0, changesRequested: 1 });
      await ok(review(devBranch, 'approve', bob));
      await ok(review(devBranch, 'approve', alice));
      // No comment: null.
      expect((await reviews(devBranch))[0]).toMatchObject({ reviewer: { id: alice.userId }, comment: null });
      expect(await branchItem(devBranch)).toMatchObject({ approvals: 2, changesRequested: 0 });
    });

    it('refuses a review by an author of the change, and of the deploy branch', async () => {
      const message = await refused(review(devBranch, 'approve', author), 409, 'cannot_review_own_change');
      expect(message).toContain('You authored a commit of');
      await refused(review('master', 'approve', alice), 400, 'deploy_branch_protected');
      expect((await reviews(devBranch)).some((r) => r.reviewer.id === author.userId)).toBe(false);
    });

    it('keeps one review per reviewer and head under parallel requests', async () => {
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          review(devBranch, i % 2 ? 'approve' : 'request_changes', dave, `parallel ${i}`),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
      const daves = (await reviews(devBranch)).filter(
        (r) => r.headCommit === head && r.reviewer.id === dave.userId,
      );
      expect(daves).toHaveLength(1);
      // The one kept is the last written: one of the answers, with its verdict and comment.
      const kept = answers.find((a) => a.body.id === daves[0].id)!;
      expect(kept.body).toEqual(daves[0]);
      // Several reviewers at once: each recorded.
      await Promise.all([
        ok(review(devBranch, 'approve', dave)),
        ok(review(devBranch, 'approve', carol)),
        ok(review(devBranch, 'approve', bob)),
      ]);
      const current = (await reviews(devBranch)).filter((r) => r.headCommit === head);
      expect(current.map((r) => r.reviewer.id).sort()).toEqual(
        [alice.userId, bob.userId, carol.userId, dave.userId].sort(),
      );
      expect(await branchItem(devBranch)).toMatchObject({ approvals: 4, changesRequested: 0 });
    });

    it('dismisses every review when the branch moves, and lists them newest first with paging', async () => {
      const moved = await commit();
      const all = await reviews(devBranch);
      expect(all.filter((r) => r.headCommit === head).every((r) => r.dismissed)).toBe(true);
      expect(all.map((r) => r.id)).toEqual([...all.map((r) => r.id)].sort((a, b) => b - a));
      expect(await branchItem(devBranch)).toMatchObject({
        lastHash: moved,
        approvals: 0,
        changesRequested: 0,
      });
      const first = await ok(get('/branches/reviews', { branchName: devBranch, first: 2 }, reader));
      expect(first.items).toEqual(all.slice(0, 2));
      expect(first.pageInfo.hasNextPage).toBe(true);
      const next = await ok(
        get(
          '/branches/reviews',
          { branchName: devBranch, first: 2, after: first.pageInfo.endCursor },
          reader,
        ),
      );
      expect(next.items).toEqual(all.slice(2, 4));
    });

    it('dismisses the reviews of a shared branch whoever moves it, and counts merges as authorship', async () => {
      const authorsBranch = (await ok(post('/branches', { name: 'feature/gate', activate: true }, author)))
        .branchName;
      await commit(authorsBranch);
      await ok(post('/merge', {}, author)); // into feature/gate
      const approved = await ok(review('feature/gate', 'approve', alice));
      expect(await branchItem('feature/gate')).toMatchObject({ approvals: 1 });
      // Bob moves it: a change of his merged into it.
      const bobsBranch = (await ok(post('/dev-mode', { branchName: 'feature/gate' }, bob))).branchName;
      await commit(bobsBranch, bob);
      await ok(post('/merge', {}, bob));
      expect((await reviews('feature/gate')).find((r) => r.id === approved.id)).toMatchObject({
        dismissed: true,
      });
      expect(await branchItem('feature/gate')).toMatchObject({ approvals: 0 });
      // Bob authored commits of it now (his change and its merge): he may not review it.
      await refused(review('feature/gate', 'approve', bob), 409, 'cannot_review_own_change');
      await leaveDevMode(bob);
      await ok(post('/dev-mode', { branchName: devBranch }, author));
    });

    describe('refusals', () => {
      it('401 without a token', async () => {
        const write = await t
          .http()
          .post(build('/branches/reviews'))
          .send({ branchName: devBranch, verdict: 'approve' });
        expectErrorShape(write.body, 401, 'unauthorized');
        const read = await t.http().get(build('/branches/reviews')).query({ branchName: devBranch });
        expectErrorShape(read.body, 401, 'unauthorized');
      });

      it('403 to review without SchemaUpdate, and to list without SchemaRead', async () => {
        await refused(review(devBranch, 'approve', devOnly), 403, 'forbidden');
        await refused(review(devBranch, 'approve', reader), 403, 'forbidden');
        await refused(get('/branches/reviews', { branchName: devBranch }, viewer), 403, 'forbidden');
      });

      it("404 for another account's deployment and for an unknown branch", async () => {
        await refused(
          t
            .http()
            .post(build('/branches/reviews', otherDeployment))
            .set(as(alice))
            .send({ branchName: 'master', verdict: 'approve' })
            .then((r) => r),
          404,
          'deployment_not_found',
        );
        await refused(
          t
            .http()
            .get(build('/branches/reviews', otherDeployment))
            .query({ branchName: 'master' })
            .set(as(alice))
            .then((r) => r),
          404,
          'deployment_not_found',
        );
        await refused(review('no/such-branch', 'approve', alice), 404, 'branch_not_found');
        await refused(
          get('/branches/reviews', { branchName: 'no/such-branch' }, reader),
          404,
          'branch_not_found',
        );
      });

      it('400 for a bad verdict, branch name, comment, cursor or an unknown field', async () => {
        const cases: Array<[Json, string, string]> = [
          [
            { branchName: devBranch, verdict: 'lgtm' },
            'validation_failed',
            'verdict must be one of: approve, request_changes',
          ],
          [{ verdict: 'approve' }, 'validation_failed', 'branchName'],
          [{ branchName: 'a..b', verdict: 'approve' }, 'invalid_branch_name', 'branchName'],
          [
            { branchName: devBranch, verdict: 'approve', comment: 'x'.repeat(10_001) },
            'validation_failed',
            'comment',
          ],
          [
            { branchName: devBranch, verdict: 'approve', headCommit: 'abc' },
            'validation_failed',
            'headCommit',
          ],
          [{ branchName: devBranch, verdict: 'approve', comment: 7 }, 'validation_failed', 'comment'],
        ];
        for (const [body, code, mentions] of cases) {
          const message = await refused(post('/branches/reviews', body, alice), 400, code);
          expect(message).toContain(mentions);
        }
        await refused(get('/branches/reviews', {}, reader), 400, 'validation_failed');
        await refused(
          get('/branches/reviews', { branchName: devBranch, sort: 'x' }, reader),
          400,
          'validation_failed',
        );
        await refused(
          get('/branches/reviews', { branchName: devBranch, after: 'nope' }, reader),
          400,
          'invalid_cursor',
        );
        // A comment at the bound is kept whole.
        const long = await ok(review(devBranch, 'approve', alice, 'y'.repeat(10_000)));
        expect(long.comment).toHaveLength(10_000);
      });
    });
  });

  describe('the gate', () => {
    let masterBefore: string;

    it('is set on the deployment by PUT, within bounds', async () => {
      for (const bad of [
        { deployBranchRequiredApprovals: 11 },
        { deployBranchRequiredApprovals: -1 },
        { deployBranchRequiredApprovals: 1.5 },
        { deployBranchRequiredApprovals: '2' },
        { deployBranchBlockNewBrokenContent: 'yes' },
      ]) {
        const res = await t.http().put(`/api/v1/deployments/${id}`).set(as()).send(bad);
        expectErrorShape(res.body, 400, 'validation_failed');
      }
      const settings = await setGate({ deployBranchRequiredApprovals: 2 });
      expect(settings).toMatchObject({
        deployBranchRequiredApprovals: 2,
        deployBranchBlockNewBrokenContent: false,
      });
      expect(await ok(t.http().get(`/api/v1/deployments/${id}/settings`).set(as(reader)))).toMatchObject({
        deployBranchRequiredApprovals: 2,
      });
    });

    it('refuses a merge into the deploy branch naming the approvals missing, and changes nothing', async () => {
      await commit();
      masterBefore = await headOf('master');
      const message = await refused(post('/merge', {}, author), 409, 'merge_gate_unmet');
      expect(message).toBe(
        'The merge gate of master is not met: needs 2 more approvals by a SchemaUpdate holder other than the ' +
          'authors of the change (0 of 2). Nothing was merged.',
      );
      const direct = await refused(
        post('/merge-to-default', { branchName: devBranch }, author),
        409,
        'merge_gate_unmet',
      );
      expect(direct).toContain('needs 2 more approvals');
      expect(await headOf('master')).toBe(masterBefore);
      // Merging into a branch that is not the deploy branch is not gated.
      const davesBranch = (await ok(post('/dev-mode', { branchName: 'feature/gate' }, dave))).branchName;
      await commit(davesBranch, dave);
      expect(await ok(post('/merge', {}, dave))).toMatchObject({ merged: true });
      await leaveDevMode(dave);
    });

    it('counts approvals only by users who hold SchemaUpdate now', async () => {
      await ok(review(devBranch, 'approve', alice));
      expect(await refused(post('/merge', {}, author), 409, 'merge_gate_unmet')).toContain(
        'needs 1 more approval by a SchemaUpdate holder other than the authors of the change (1 of 2)',
      );
      // Bob approves, then loses SchemaUpdate: his approval stops counting at once.
      await ok(review(devBranch, 'approve', bob));
      expect(await branchItem(devBranch)).toMatchObject({ approvals: 2 });
      await ok(
        t
          .http()
          .put(`/api/v1/users/${bob.userId}`)
          .set(as())
          .send({ defaultRoles: ['AIBIViewer'] }),
      );
      expect(await refused(post('/merge', {}, author), 409, 'merge_gate_unmet')).toContain(
        '(1 of 2; not counted: bob@acme.test, who does not hold SchemaUpdate)',
      );
      expect(await branchItem(devBranch)).toMatchObject({ approvals: 1 });
      expect(await headOf('master')).toBe(masterBefore);
      await ok(
        t
          .http()
          .put(`/api/v1/users/${bob.userId}`)
          .set(as())
          .send({ defaultRoles: ['Developer'] }),
      );
    });

    it('blocks on a current request for changes, whatever the approvals', async () => {
      await ok(review(devBranch, 'request_changes', dave, 'Rename it back'));
      expect(await refused(post('/merge', {}, author), 409, 'merge_gate_unmet')).toBe(
        'The merge gate of master is not met: changes requested by dave@acme.test. Nothing was merged.',
      );
      expect(await branchItem(devBranch)).toMatchObject({ approvals: 2, changesRequested: 1 });
    });

    it('lets a tenant admin override it, recorded in the audit log with what was missing', async () => {
      // Anyone else asking is refused, and the refusal is recorded.
      const message = await refused(
        post('/merge-to-default', { branchName: devBranch, overrideMergeGate: true }, alice),
        403,
        'merge_gate_override_forbidden',
      );
      expect(message).toContain('tenant admins');
      await refused(
        post('/merge', { overrideMergeGate: true }, author),
        403,
        'merge_gate_override_forbidden',
      );
      const [forbidden] = await auditEvents({ action: 'mergeToDefault', actorId: alice.userId });
      expect(forbidden).toMatchObject({ outcome: 'failure', statusCode: 403, details: null });
      expect(await headOf('master')).toBe(masterBefore);

      const head = await headOf(devBranch);
      const merged = await ok(
        post(
          '/merge-to-default',
          { branchName: devBranch, overrideMergeGate: true, message: 'Hotfix' },
          t.admin,
        ),
      );
      expect(merged).toEqual({ merged: true, branchDeleted: false });
      expect(await headOf('master')).not.toBe(masterBefore);
      const [event] = await auditEvents({ action: 'mergeToDefault', actorId: t.admin.userId });
      expect(event).toMatchObject({
        actorEmail: t.admin.email,
        method: 'POST',
        path: `/build/api/v1/deployments/${id}/merge-to-default`,
        outcome: 'success',
        statusCode: 200,
        details: {
          mergeGateOverridden: true,
          branchName: devBranch,
          headCommit: head,
          missing: ['changes requested by dave@acme.test'],
        },
      });
      // Merges that were not overridden say nothing more.
      const plain = await auditEvents({ action: 'merge', actorId: author.userId });
      expect(plain.length).toBeGreaterThan(0);
      expect(plain.every((e) => e.details === null)).toBe(true);
    });

    it('passes with enough approvals by holders other than the authors, one through a grant on the deployment', async () => {
      const head = await commit();
      expect(await refused(post('/merge', {}, author), 409, 'merge_gate_unmet')).toContain('(0 of 2)');
      await ok(review(devBranch, 'approve', alice));
      // Carol holds SchemaUpdate through a role's grant on this deployment only.
      await ok(review(devBranch, 'approve', carol));
      expect(await branchItem(devBranch)).toMatchObject({
        lastHash: head,
        approvals: 2,
        changesRequested: 0,
      });
      const before = await headOf('master');
      expect(await ok(post('/merge', {}, author))).toEqual({ merged: true, branchDeleted: false });
      expect(await headOf('master')).not.toBe(before);
      // Merged: nothing to merge now, which the gate does not stand in the way of.
      expect(await ok(post('/merge-to-default', { branchName: devBranch }, author))).toMatchObject({
        merged: true,
      });
    });

    it('merges a shared branch with approvals by reviewers who authored none of it', async () => {
      // feature/gate holds the author's, bob's and dave's changes, each merged by its author; dave's
      // merge dismissed the reviews before it.
      const head = await headOf('feature/gate');
      expect(await branchItem('feature/gate')).toMatchObject({ approvals: 0, changesRequested: 0 });
      const message = await refused(
        post('/merge-to-default', { branchName: 'feature/gate' }, dave),
        409,
        'merge_gate_unmet',
      );
      expect(message).toContain('needs 2 more approvals');
      await refused(review('feature/gate', 'approve', dave), 409, 'cannot_review_own_change');
      await ok(review('feature/gate', 'approve', alice));
      await ok(review('feature/gate', 'approve', carol));
      const current = (await reviews('feature/gate')).filter((r) => r.headCommit === head && !r.dismissed);
      expect(current.map((r) => r.reviewer.id).sort()).toEqual([alice.userId, carol.userId].sort());
      const before = await headOf('master');
      expect(await ok(post('/merge-to-default', { branchName: 'feature/gate' }, dave))).toMatchObject({
        merged: true,
      });
      expect(await headOf('master')).not.toBe(before);
      // Gate off again: merges as before.
      await setGate({ deployBranchRequiredApprovals: 0 });
      await commit();
      expect(await ok(post('/merge', {}, author))).toMatchObject({ merged: true });
    });
  });
});

/**
 * The acceptance scenario, through HTTP with real compiles: a branch renames a measure that
 * a report and a notification use (the notification in a filter of its own, and through the
 * dashboard that shows the report); the member diff, the content impact (validate) and the merge
 * gate each say so; another user approves; the report is fixed, which fixes the dashboard, and the
 * gate still names the notification, for its own filter; the notification is fixed too, and the
 * merge passes.
 */
describe('the acceptance scenario: a renamed measure through review and the merge gate', () => {
  let t: TestApp;
  let id: number;
  let author: Actor;
  let reviewer: Actor;
  let branch: string;
  const ids: Record<string, number> = {};

  const api = (path: string) => `/api/v1/deployments/${id}${path}`;
  const build = (path: string) => `/build/api/v1/deployments/${id}${path}`;
  const as = (actor: Actor = t.admin) => bearer(actor.token);
  const ok = async (req: PromiseLike<Res>, status = 200): Promise<any> => {
    const res = await req;
    if (res.status !== status)
      throw new Error(`expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const mergeRefusal = async (): Promise<string> => {
    const res = await t.http().post(build('/merge-to-default')).set(as(author)).send({ branchName: branch });
    expect({ status: res.status, code: res.body.code as unknown }).toEqual({
      status: 409,
      code: 'merge_gate_unmet',
    });
    return res.body.message as string;
  };
  const publish = () =>
    ok(
      t
        .http()
        .post(api(`/workbooks/${ids.workbook}/publish`))
        .set(as())
        .send({
          workbookId: ids.workbook,
          title: 'Sales',
          config: {
            widgets: [
              {
                id: 'w1',
                type: 'CHART',
                position: { x: 0, y: 0, w: 6, h: 4 },
                config: { reportId: ids.report },
              },
            ],
          },
        }),
    );

  beforeAll(async () => {
    t = await startApp({ QUEUE_STALL_SECONDS: '3600' });
    author = await newUser(t, t.admin, { email: 'author@acme.test', defaultRoles: ['Developer'] });
    reviewer = await newUser(t, t.admin, { email: 'reviewer@acme.test', defaultRoles: ['Developer'] });
    id = (await ok(t.http().post('/build/api/v1/deployments').set(as()).send(deploymentInput()))).id;
    await ok(
      t
        .http()
        .put(`/api/v1/deployments/${id}`)
        .set(as())
        .send({ deployBranchRequiredApprovals: 1, deployBranchBlockNewBrokenContent: true }),
    );

    // On the deploy branch's model: a report naming `orders.count`, on the published dashboard
    // "Sales", of which a daily notification is sent.
    ids.workbook = (await ok(t.http().post(api('/workbooks')).set(as()).send({ name: 'Sales workbook' }))).id;
    ids.report = (
      await ok(
        t
          .http()
          .post(api('/reports'))
          .set(as())
          .send({
            name: 'Orders count',
            workbookId: ids.workbook,
            jsonQuery: JSON.stringify({ measures: ['orders.count'], dimensions: ['orders.status'] }),
          }),
      )
    ).id;
    ids.dashboard = (await publish()).id;
    ids.notification = (
      await ok(
        t
          .http()
          .post(api('/notifications'))
          .set(as())
          .send({
            dashboardId: ids.dashboard,
            scheduleType: 'DAILY',
            hour: 9,
            minute: 0,
            // Its own filter names the measure too: only orders that have a count.
            filters: [{ member: 'orders.count' }],
          }),
      )
    ).id;

    // The author's branch renames the measure (and the view that includes it), committed.
    branch = (await ok(t.http().post(build('/dev-mode')).set(as(author)).send({}))).branchName;
    await ok(
      t
        .http()
        .put(build('/data-model/files'))
        .set(as(author))
        .send({
          files: [...STARTER_COUNT_RENAMED],
        }),
    );
    await ok(t.http().post(build('/commit')).set(as(author)).send({ message: 'Rename orders.count' }));
  });
  afterAll(async () => {
    if (!t) return;
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${t.config.queue.prefix}:model-verdict:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    await t.close();
  });

  const renamed = { member: 'orders.count', reason: 'member_renamed', renamedTo: 'orders.order_count' };
  let notificationName: string;

  it('the member diff says the measure was renamed, and what it breaks', async () => {
    const diff = await ok(t.http().get(build('/branches/diff')).query({ head: branch }).set(as(reviewer)));
    expect(diff).toMatchObject({
      base: { branchName: 'master', valid: true },
      head: { branchName: branch, valid: true },
    });
    expect(diff.breaking).toBe(true);
    const orders = diff.cubes.find((c: Json) => c.name === 'orders');
    expect(orders.members).toContainEqual(
      expect.objectContaining({
        kind: 'measure',
        name: 'order_count',
        change: 'renamed',
        previousName: 'count',
        breaking: true,
      }),
    );
    expect(diff.impact).toEqual([
      { type: 'report', id: ids.report, name: 'Orders count', ...renamed, tenants: [] },
      { type: 'dashboard', id: ids.dashboard, name: 'Sales', ...renamed, tenants: [] },
      {
        type: 'notification',
        id: ids.notification,
        name: expect.stringMatching(/^Sales: /),
        ...renamed,
        tenants: [],
      },
    ]);
    notificationName = diff.impact[2].name;
  });

  it('the content impact of validate says the same', async () => {
    const validated = await ok(
      t.http().get(build('/data-model/validate')).query({ branchName: branch }).set(as(reviewer)),
    );
    expect(validated).toMatchObject({ branchName: branch, valid: true });
    expect(validated.impact.map((i: Json) => [i.type, i.id, i.member, i.reason])).toEqual([
      ['report', ids.report, 'orders.count', 'member_renamed'],
      ['dashboard', ids.dashboard, 'orders.count', 'member_renamed'],
      ['notification', ids.notification, 'orders.count', 'member_renamed'],
    ]);
  });

  it('the gate refuses the merge naming the missing approval and the broken items', async () => {
    const masterBefore = (await ok(t.http().get(build('/branches')).set(as()))).items.find(
      (b: Json) => b.name === 'master',
    ).lastHash;
    const why = ' (orders.count renamed to orders.order_count)';
    expect(await mergeRefusal()).toBe(
      'The merge gate of master is not met: needs 1 more approval by a SchemaUpdate holder other than the ' +
        'authors of the change (0 of 1); would break 3 items: ' +
        `report ${ids.report} "Orders count"${why}, dashboard ${ids.dashboard} "Sales"${why}, ` +
        `notification ${ids.notification} ${JSON.stringify(notificationName)}${why}. Nothing was merged.`,
    );
    const after = (await ok(t.http().get(build('/branches')).set(as()))).items.find(
      (b: Json) => b.name === 'master',
    );
    expect(after.lastHash).toBe(masterBefore);
  });

  it('approved by another user, the gate names only the broken items', async () => {
    const own = await t
      .http()
      .post(build('/branches/reviews'))
      .set(as(author))
      .send({ branchName: branch, verdict: 'approve' });
    expect({ status: own.status, code: own.body.code as unknown }).toEqual({
      status: 409,
      code: 'cannot_review_own_change',
    });
    await ok(
      t
        .http()
        .post(build('/branches/reviews'))
        .set(as(reviewer))
        .send({ branchName: branch, verdict: 'approve', comment: 'The rename is right; fix the report' }),
    );
    const listed = (await ok(t.http().get(build('/branches')).set(as(author)))).items.find(
      (b: Json) => b.name === branch,
    );
    expect(listed).toMatchObject({ approvals: 1, changesRequested: 0 });
    const message = await mergeRefusal();
    expect(message).not.toContain('approval');
    expect(message).toContain(`would break 3 items: report ${ids.report} "Orders count"`);
  });

  it('with the report fixed, the gate still names the notification, for its own filter', async () => {
    await ok(
      t
        .http()
        .put(api(`/reports/${ids.report}`))
        .set(as())
        .send({
          jsonQuery: JSON.stringify({ measures: ['orders.order_count'], dimensions: ['orders.status'] }),
        }),
    );
    // The dashboard was broken through the report only; the notification's filter is its own.
    expect(await mergeRefusal()).toBe(
      'The merge gate of master is not met: would break 1 item: ' +
        `notification ${ids.notification} ${JSON.stringify(notificationName)} ` +
        '(orders.count renamed to orders.order_count). Nothing was merged.',
    );
  });

  it('with the notification fixed too, the merge passes and the deploy branch has the rename', async () => {
    await ok(
      t
        .http()
        .put(api(`/notifications/${ids.notification}`))
        .set(as())
        .send({ filters: [{ member: 'orders.order_count' }] }),
    );
    const diff = await ok(t.http().get(build('/branches/diff')).query({ head: branch }).set(as(reviewer)));
    expect(diff.impact).toEqual([]);
    const masterBefore = (await ok(t.http().get(build('/branches')).set(as()))).items.find(
      (b: Json) => b.name === 'master',
    ).lastHash;
    const merged = await ok(
      t
        .http()
        .post(build('/merge-to-default'))
        .set(as(author))
        .send({ branchName: branch, message: 'Rename' }),
    );
    expect(merged).toEqual({ merged: true, branchDeleted: false });
    const master = (await ok(t.http().get(build('/branches')).set(as()))).items.find(
      (b: Json) => b.name === 'master',
    );
    expect(master.lastHash).not.toBe(masterBefore);
    const file = await ok(
      t.http().get(build('/data-model/files')).query({ branchName: 'master', withContent: 'true' }).set(as()),
    );
    expect(JSON.stringify(file)).toContain('name: order_count');
    // The deploy branch has the change: nothing differs now.
    const same = await ok(t.http().get(build('/branches/diff')).query({ head: branch }).set(as(reviewer)));
    expect(same).toMatchObject({ breaking: false, cubes: [], impact: [] });
  });
});
