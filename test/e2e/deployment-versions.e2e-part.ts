import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../../migrations/index.js';
import { encodeCursor } from '../../src/core/http/cursor.js';
import { ReleasesService } from '../../src/modules/deployments/releases.service.js';
import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  type Actor,
  type TestApp,
} from '../support/app.js';
import { createTestDatabase, dropTestDatabase } from '../support/database.js';
import { postDeployment, waitFor } from '../support/factories.js';

interface Version {
  version: string;
  releaseChannel: string;
  releaseChannelVersion: string;
  isCurrent: boolean;
  isLatestInChannel: boolean;
}

/** A listed version in short: `latest 1.6.2 current head`. */
const short = (v: Version) =>
  [v.releaseChannel, v.releaseChannelVersion, v.isCurrent ? 'current' : '', v.isLatestInChannel ? 'head' : '']
    .filter(Boolean)
    .join(' ');

/**
 * The release catalogue is one for the whole service, so this file's tests add releases in an
 * order they all expect: the heads start at latest 1.6.2 and release 1.5.9 (the seed).
 */
describe('deployment versions', () => {
  let t: TestApp;
  let viewer: Actor;
  let other: Actor;
  let otherDeploymentId: number;

  const create = async (actor: Actor = t.admin) =>
    (await postDeployment(t, actor, { creationStep: 'project' })).id;
  const put = (id: number | string, body: Record<string, unknown>, actor: Actor = t.admin) =>
    t.http().put(`/api/v1/deployments/${id}`).set(bearer(actor.token)).send(body);
  const versions = (id: number | string, query: Record<string, unknown> = {}, actor: Actor = t.admin) =>
    t.http().get(`/api/v1/deployments/${id}/versions`).query(query).set(bearer(actor.token));
  const listed = async (id: number) => {
    const res = await versions(id);
    expect(res.status).toBe(200);
    return (res.body.items as Version[]).map(short);
  };
  const settings = async (id: number) =>
    (await t.http().get(`/api/v1/deployments/${id}/settings`).set(bearer(t.admin.token))).body as {
      releaseChannel: string;
      releaseChannelVersion: string | null;
      releaseChannelVersionHold: boolean;
      cubeImageVersion: string | null;
    };
  const history = async (id: number) =>
    (
      await t.sql<{ release_channel: string; version: string }>(
        `SELECT release_channel, version FROM deployment_versions WHERE deployment_id = $1 ORDER BY id`,
        [id],
      )
    ).map((r) => `${r.release_channel} ${r.version}`);
  const addRelease = (channel: 'latest' | 'release', version: string) =>
    t.app.get(ReleasesService).addRelease(channel, version);

  beforeAll(async () => {
    t = await startApp();
    viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
    other = await newAccount(t, 'globex');
    otherDeploymentId = await create(other);
  });
  afterAll(() => t.close());

  describe('GET /api/v1/deployments/{deploymentId}/versions', () => {
    it('lists the head of each channel for a new deployment, the one it runs current', async () => {
      const id = await create();
      const res = await versions(id);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        items: [
          {
            version: 'v1.6.2',
            releaseChannel: 'latest',
            releaseChannelVersion: '1.6.2',
            isCurrent: true,
            isLatestInChannel: true,
          },
          {
            version: 'v1.5.9',
            releaseChannel: 'release',
            releaseChannelVersion: '1.5.9',
            isCurrent: false,
            isLatestInChannel: true,
          },
        ],
        pageInfo: {
          hasNextPage: false,
          hasPreviousPage: false,
          startCursor: expect.any(String),
          endCursor: expect.any(String),
        },
      });
      expect(await history(id)).toEqual(['latest 1.6.2']);
    });

    it('lets a reader list them; 401 without a token, 403 without DeploymentRead', async () => {
      const id = await create();
      expect((await versions(id, {}, viewer)).status).toBe(200);
      const anonymous = await t.http().get(`/api/v1/deployments/${id}/versions`);
      expectErrorShape(anonymous.body, 401, 'unauthorized');
      const guest = await newUser(t, t.admin, { defaultRoles: ['Guest'] });
      const refused = await versions(id, {}, guest);
      expectErrorShape(refused.body, 403, 'forbidden');
      expect(refused.body.message).toContain('DeploymentRead');
    });

    it("answers 404 deployment_not_found for another account's deployment and a missing one", async () => {
      for (const id of [otherDeploymentId, 2_000_000_000]) {
        const res = await versions(id);
        expect({ id, status: res.status }).toEqual({ id, status: 404 });
        expectErrorShape(res.body, 404, 'deployment_not_found');
      }
    });

    it.each([
      ['a garbage cursor', { after: 'not-a-cursor!' }, 'invalid_cursor'],
      ['a cursor of another list', { after: encodeCursor([5]) }, 'invalid_cursor'],
      ['a cursor naming no channel', { after: encodeCursor(['nightly', 1, 0, 0]) }, 'invalid_cursor'],
      ['a cursor out of range', { after: encodeCursor(['latest', 2 ** 40, 0, 0]) }, 'invalid_cursor'],
      ['a negative cursor part', { after: encodeCursor(['latest', 1, -1, 0]) }, 'invalid_cursor'],
      ['first=0', { first: 0 }, 'validation_failed'],
      ['first too large', { first: 1001 }, 'validation_failed'],
      ['the legacy limit', { limit: 2 }, 'validation_failed'],
      ['an unknown parameter', { channel: 'latest' }, 'validation_failed'],
    ])('answers 400 for %s', async (_, query, code) => {
      const id = await create();
      const res = await versions(id, query);
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, code);
    });

    it.each(['abc', '0', '99999999999'])('answers 400 for the id %s', async (id) => {
      const res = await versions(id);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect(JSON.stringify(res.body.message)).toContain('deploymentId');
    });
  });

  describe('what a deployment runs, and its history', () => {
    let follower: number;
    let holder: number;
    let switcher: number;

    beforeAll(async () => {
      follower = await create();
      holder = await create();
      switcher = await create();
      // The holder keeps 1.6.2 whatever the channel releases.
      const held = await put(holder, { releaseChannelVersionHold: true });
      expect(held.body).toMatchObject({ releaseChannelVersion: '1.6.2', releaseChannelVersionHold: true });
      // The switcher follows the release channel.
      const switched = await put(switcher, { releaseChannel: 'release' });
      expect(switched.body).toMatchObject({
        releaseChannel: 'release',
        releaseChannelVersion: '1.5.9',
        releaseChannelVersionHold: false,
        cubeImageVersion: 'v1.5.9',
      });
    });

    it('records a change of channel; the versions list offers what it ran', async () => {
      expect(await history(switcher)).toEqual(['latest 1.6.2', 'release 1.5.9']);
      expect(await listed(switcher)).toEqual(['latest 1.6.2 head', 'release 1.5.9 current head']);
      // Holding the version it runs records nothing: it runs the same.
      expect(await history(holder)).toEqual(['latest 1.6.2']);
    });

    it('moves every follower of a channel to its new head, in the same unit of work; holders stay', async () => {
      const result = await addRelease('latest', 'v1.7.0');
      expect(result).toMatchObject({ channel: 'latest', version: '1.7.0', added: true, head: '1.7.0' });
      expect(result.deploymentsMoved).toBeGreaterThanOrEqual(1);

      expect(await settings(follower)).toMatchObject({
        releaseChannel: 'latest',
        releaseChannelVersion: '1.7.0',
        releaseChannelVersionHold: false,
        cubeImageVersion: 'v1.7.0',
      });
      expect(await history(follower)).toEqual(['latest 1.6.2', 'latest 1.7.0']);
      expect(await listed(follower)).toEqual([
        'latest 1.7.0 current head',
        'latest 1.6.2',
        'release 1.5.9 head',
      ]);

      expect(await settings(holder)).toMatchObject({
        releaseChannelVersion: '1.6.2',
        releaseChannelVersionHold: true,
        cubeImageVersion: 'v1.6.2',
      });
      expect(await history(holder)).toEqual(['latest 1.6.2']);
      expect(await listed(holder)).toEqual([
        'latest 1.7.0 head',
        'latest 1.6.2 current',
        'release 1.5.9 head',
      ]);

      // Followers of the other channel run what they ran.
      expect(await history(switcher)).toEqual(['latest 1.6.2', 'release 1.5.9']);

      // Every deployment following `latest` got its row: none is missing one, none was given one twice.
      const missing = await t.sql(
        `SELECT d.id FROM deployments d WHERE d.release_channel = 'latest' AND NOT d.release_channel_version_hold
           AND (SELECT h.version FROM deployment_versions h WHERE h.deployment_id = d.id ORDER BY h.id DESC LIMIT 1) <> '1.7.0'`,
      );
      expect(missing).toEqual([]);
    });

    it('changes nothing when the release is added again, or is not above the head', async () => {
      const before = await t.sql(`SELECT count(*)::int AS n FROM deployment_versions`);
      const again = await addRelease('latest', '1.7.0');
      expect(again).toEqual({
        channel: 'latest',
        version: '1.7.0',
        added: false,
        head: '1.7.0',
        deploymentsMoved: 0,
      });
      const older = await addRelease('latest', '1.6.5');
      expect(older).toEqual({
        channel: 'latest',
        version: '1.6.5',
        added: true,
        head: '1.7.0',
        deploymentsMoved: 0,
      });
      expect(await t.sql(`SELECT count(*)::int AS n FROM deployment_versions`)).toEqual(before);
      // 1.6.5 is in the catalogue, but no deployment ran it: no one is offered it.
      expect(await listed(follower)).not.toContain('latest 1.6.5');
      expectErrorShape(
        (await put(follower, { releaseChannelVersion: '1.6.5' })).body,
        400,
        'release_version_invalid',
      );
    });

    it('holds a version other than the head when one is chosen, and follows again when the head is', async () => {
      const held = await put(follower, { releaseChannelVersion: 'v1.6.2' });
      expect(held.status).toBe(200);
      expect(held.body).toMatchObject({
        releaseChannel: 'latest',
        releaseChannelVersion: '1.6.2',
        releaseChannelVersionHold: true,
        cubeImageVersion: 'v1.6.2',
      });
      expect(await settings(follower)).toEqual(held.body);
      expect(await history(follower)).toEqual(['latest 1.6.2', 'latest 1.7.0', 'latest 1.6.2']);
      expect(await listed(follower)).toEqual([
        'latest 1.7.0 head',
        'latest 1.6.2 current',
        'release 1.5.9 head',
      ]);

      const head = await put(follower, { releaseChannelVersion: '1.7.0' });
      expect(head.body).toMatchObject({ releaseChannelVersion: '1.7.0', releaseChannelVersionHold: false });
      expect(await history(follower)).toEqual([
        'latest 1.6.2',
        'latest 1.7.0',
        'latest 1.6.2',
        'latest 1.7.0',
      ]);
    });

    it('takes an explicit hold: the head held stays when a new head comes; false follows again', async () => {
      const id = await create();
      const held = await put(id, { releaseChannelVersion: '1.7.0', releaseChannelVersionHold: true });
      expect(held.body).toMatchObject({ releaseChannelVersion: '1.7.0', releaseChannelVersionHold: true });
      expect(await history(id)).toEqual(['latest 1.7.0']);

      await addRelease('latest', '1.8.0');
      expect(await settings(id)).toMatchObject({
        releaseChannelVersion: '1.7.0',
        releaseChannelVersionHold: true,
      });
      expect(await history(id)).toEqual(['latest 1.7.0']);

      // A rename leaves the version alone.
      expect((await put(id, { name: 'Renamed' })).body).toMatchObject({
        releaseChannelVersion: '1.7.0',
        releaseChannelVersionHold: true,
      });

      const released = await put(id, { releaseChannelVersionHold: false });
      expect(released.body).toMatchObject({
        releaseChannelVersion: '1.8.0',
        releaseChannelVersionHold: false,
      });
      expect(await history(id)).toEqual(['latest 1.7.0', 'latest 1.8.0']);

      // null is no hold.
      await put(id, { releaseChannelVersionHold: true });
      const cleared = await put(id, { releaseChannelVersionHold: null });
      expect(cleared.body).toMatchObject({
        releaseChannelVersion: '1.8.0',
        releaseChannelVersionHold: false,
      });

      // `releaseChannelVersion: null` follows the channel; with the hold it holds the head.
      const nullHeld = await put(id, { releaseChannelVersion: null, releaseChannelVersionHold: true });
      expect(nullHeld.body).toMatchObject({
        releaseChannelVersion: '1.8.0',
        releaseChannelVersionHold: true,
      });
      const nullFollow = await put(id, { releaseChannelVersion: null });
      expect(nullFollow.body).toMatchObject({
        releaseChannelVersion: '1.8.0',
        releaseChannelVersionHold: false,
      });
    });

    it('refuses a hold of false beside a version other than the head, changing nothing', async () => {
      const id = await create(); // runs latest 1.8.0
      await put(id, { releaseChannel: 'release' }); // runs release 1.5.9
      await put(id, { releaseChannel: 'latest' }); // runs latest 1.8.0 again
      await addRelease('release', '1.5.10');
      const snapshot = await settings(id);
      const before = await history(id);
      expect(before).toEqual(['latest 1.8.0', 'release 1.5.9', 'latest 1.8.0']);

      // 1.5.9 is no longer the head of release, but this deployment ran it there.
      const contradictory = await put(id, {
        releaseChannel: 'release',
        releaseChannelVersion: '1.5.9',
        releaseChannelVersionHold: false,
        name: 'Not renamed',
      });
      expect(contradictory.status).toBe(400);
      expectErrorShape(contradictory.body, 400, 'validation_failed');
      expect(JSON.stringify(contradictory.body.message)).toContain('releaseChannelVersionHold');
      expect(await settings(id)).toEqual(snapshot);
      expect(await history(id)).toEqual(before);

      // Without the contradiction it is held.
      const held = await put(id, { releaseChannel: 'release', releaseChannelVersion: '1.5.9' });
      expect(held.body).toMatchObject({
        releaseChannel: 'release',
        releaseChannelVersion: '1.5.9',
        releaseChannelVersionHold: true,
      });
      expect(await listed(id)).toEqual(['latest 1.8.0 head', 'release 1.5.10 head', 'release 1.5.9 current']);
    });

    it('orders the heads semantically: 1.5.10 is above 1.5.9', async () => {
      const id = await create();
      const res = await put(id, { releaseChannel: 'release' });
      expect(res.body).toMatchObject({ releaseChannelVersion: '1.5.10', releaseChannelVersionHold: false });
    });

    it('pages with first/after through every listed version, in order', async () => {
      const id = await create();
      await put(id, { releaseChannel: 'release' }); // release 1.5.10
      await put(id, { releaseChannel: 'latest', releaseChannelVersion: '1.8.0' });
      await addRelease('latest', '1.9.0'); // it follows latest: 1.9.0 is recorded
      const all = await listed(id);
      expect(all).toEqual(['latest 1.9.0 current head', 'latest 1.8.0', 'release 1.5.10 head']);
      const seen: string[] = [];
      let after: string | undefined;
      for (let pages = 1; ; pages++) {
        const res = await versions(id, { first: 1, ...(after ? { after } : {}) });
        expect(res.status).toBe(200);
        expect(res.body.items).toHaveLength(1);
        expect(res.body.pageInfo.hasPreviousPage).toBe(after !== undefined);
        seen.push(...(res.body.items as Version[]).map(short));
        if (!res.body.pageInfo.hasNextPage) {
          expect(pages).toBe(3);
          break;
        }
        after = res.body.pageInfo.endCursor;
      }
      expect(seen).toEqual(all);
    });

    it('never misses a head released while a PUT is changing the version (the catalogue lock)', async () => {
      const id = await create();
      await put(id, { releaseChannelVersionHold: true });
      const { releaseChannelVersion: held } = await settings(id);
      const { head } = await addRelease('latest', '1.10.0');
      const waiting = async (event: string) =>
        (
          await t.sql<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity
             WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = $1`,
            [event],
          )
        )[0].n > 0;
      // Another transaction holds the head's catalogue row: the PUT that releases the hold, which has
      // read the head and updated the deployment, waits to record that head in the history (its
      // foreign key).
      const blocker = new Client({ connectionString: t.databaseUrl });
      await blocker.connect();
      try {
        await blocker.query('BEGIN');
        await blocker.query(
          `SELECT 1 FROM release_catalogue WHERE channel = 'latest' AND version = $1 FOR UPDATE`,
          [head],
        );
        const following = put(id, { releaseChannelVersionHold: false }).then((r) => r);
        expect(await waitFor(() => waiting('transactionid'), Boolean)).toBe(true);
        // A new head now: it must wait for the PUT, or it would not count this deployment as a follower.
        let settled = false;
        const release = addRelease('latest', '1.11.0').finally(() => (settled = true));
        expect(await waitFor(async () => settled || (await waiting('advisory')), Boolean)).toBe(true);
        expect(settled).toBe(false);
        await blocker.query('COMMIT');
        expect((await following).status).toBe(200);
        expect(await release).toMatchObject({ added: true, head: '1.11.0' });
      } finally {
        await blocker.end();
      }
      expect(await settings(id)).toMatchObject({
        releaseChannelVersion: '1.11.0',
        releaseChannelVersionHold: false,
      });
      expect(await history(id)).toEqual([`latest ${held}`, 'latest 1.10.0', 'latest 1.11.0']);
    });

    it('keeps the history true while releases and version changes race', async () => {
      const ids = await Promise.all(Array.from({ length: 6 }, () => create()));
      const results = await Promise.all([
        ...ids.map((id, i) =>
          put(
            id,
            i % 2 === 0 ? { releaseChannelVersionHold: true } : { releaseChannel: 'latest', name: `r${i}` },
          ),
        ),
        addRelease('latest', '1.12.0'),
        ...ids.map((id, i) =>
          put(id, i % 3 === 0 ? { releaseChannelVersionHold: false } : { name: `s${i}` }),
        ),
      ]);
      for (const r of results) if ('status' in r) expect(r.status).toBe(200);
      for (const id of ids) {
        const now = await settings(id);
        const h = await history(id);
        // The last row of the history is what the deployment runs.
        expect({ id, last: h[h.length - 1] }).toEqual({ id, last: `latest ${now.releaseChannelVersion}` });
      }
    });
  });

  it('the migration keeps what each existing deployment chose, and starts its history', async () => {
    const db = await createTestDatabase();
    const source = new DataSource({
      type: 'postgres',
      url: db.url,
      migrations: MIGRATIONS,
      migrationsTableName: 'schema_migrations',
    });
    const NAME = 'ReleasesAndEnvVars1764500000000';
    try {
      await source.initialize();
      const applied = async () =>
        (await source.query(`SELECT 1 FROM schema_migrations WHERE name = $1`, [NAME])).length > 0;
      while (await applied()) await source.undoLastMigration();
      const [account] = await source.query(
        `INSERT INTO accounts (slug, name) VALUES ('m', 'M') RETURNING id`,
      );
      const rows: Array<[string, string, string | null, boolean | null]> = [
        ['follows', 'latest', null, null],
        ['chose an older version', 'release', '1.5.8', null],
        ['chose the head', 'latest', '1.6.2', false],
        ['held the head', 'latest', '1.6.2', true],
        ['held without a version', 'release', null, true],
        ['held a version unknown to the catalogue', 'latest', '9.9.9', true],
        ['chose an unknown version', 'release', '0.0.1', false],
      ];
      for (const [name, channel, version, hold] of rows) {
        await source.query(
          `INSERT INTO deployments (account_id, name, cloud_provider, creation_step, release_channel,
             release_channel_version, release_channel_version_hold) VALUES ($1, $2, 'aws', 'ready', $3, $4, $5)`,
          [account.id, name, channel, version, hold],
        );
      }
      await source.runMigrations();
      const after = await source.query(
        `SELECT d.name, d.release_channel_version AS version, d.release_channel_version_hold AS hold,
                (SELECT string_agg(h.release_channel || ' ' || h.version, ', ') FROM deployment_versions h
                 WHERE h.deployment_id = d.id) AS history
         FROM deployments d ORDER BY d.id`,
      );
      expect(after).toEqual([
        { name: 'follows', version: null, hold: false, history: 'latest 1.6.2' },
        { name: 'chose an older version', version: '1.5.8', hold: true, history: 'release 1.5.8' },
        { name: 'chose the head', version: null, hold: false, history: 'latest 1.6.2' },
        { name: 'held the head', version: '1.6.2', hold: true, history: 'latest 1.6.2' },
        { name: 'held without a version', version: '1.5.9', hold: true, history: 'release 1.5.9' },
        {
          name: 'held a version unknown to the catalogue',
          version: '1.6.2',
          hold: true,
          history: 'latest 1.6.2',
        },
        { name: 'chose an unknown version', version: null, hold: false, history: 'release 1.5.9' },
      ]);
    } finally {
      if (source.isInitialized) await source.destroy();
      await dropTestDatabase(db.name);
    }
  });
});
