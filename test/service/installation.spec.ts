import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { AppModule } from '../../src/app.module.js';
import { Action } from '../../src/core/auth/action.js';
import type { Principal } from '../../src/core/auth/principal.js';
import { Installation } from '../../src/core/installation/installation.js';
import {
  InstallationMismatchError,
  MARKER_FILE,
  readMarker,
} from '../../src/core/installation/installation-marker.js';
import { DeploymentsService } from '../../src/modules/deployments/deployments.service.js';
import { DataModelRepository } from '../../src/modules/data-model/data-model.repository.js';
import { GitStore } from '../../src/modules/data-model/git/git-store.js';
import { readStamp, writeStamp } from '../../src/modules/data-model/git/repo-stamp.js';
import { ReposDirRefusedError, ReposOwnership } from '../../src/modules/data-model/git/repos-ownership.js';
import { ModelWorkspace } from '../../src/modules/data-model/model-workspace.js';
import { testConfig } from '../support/app.js';
import { createTestDatabase, dropTestDatabase } from '../support/database.js';
import { expectApiError, startServiceApp, type ServiceApp } from '../support/service.js';

/**
 * Two installations (two databases) and one REPOS_DIR (issue 27): a database never opens, builds
 * or deletes a repository it did not make. `a` is an installation as the API starts it; `b` is a
 * second database with an installation id of its own, started as the command line starts (it
 * claims REPOS_DIR on first use), so each claim below runs the code a start runs.
 */
describe('an installation and its REPOS_DIR', () => {
  let a: ServiceApp;
  let b: INestApplicationContext;
  let dbB: { name: string; url: string };
  let root: string;
  let idA: string;
  let idB: string;
  let admin: Principal;
  const dirs: string[] = [];

  const tmpDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'installation-repos-'));
    dirs.push(dir);
    return dir;
  };
  /** The claim an installation's process makes at start, on `dir`. */
  const ownership = (app: INestApplicationContext, url: string, dir: string) =>
    new ReposOwnership(
      testConfig(url, { REPOS_DIR: dir }),
      app.get(Installation),
      app.get(DataModelRepository),
    ).installationId();
  /** A bare repository as an earlier version (no stamp) or another installation (`stamp`) left it. */
  const bareRepo = async (dir: string, id: number, stamp?: string) => {
    const repo = path.join(dir, `${id}.git`);
    execFileSync('git', ['init', '--bare', '--quiet', repo]);
    if (stamp) await writeStamp(repo, stamp);
    return repo;
  };
  const rejection = async (work: Promise<unknown>): Promise<Error> => {
    try {
      await work;
    } catch (err) {
      return err as Error;
    }
    throw new Error('expected a rejection');
  };

  beforeAll(async () => {
    a = await startServiceApp();
    root = a.config.dataModel.reposDir;
    admin = await a.make.principal(a.admin);
    dbB = await createTestDatabase();
    b = await NestFactory.createApplicationContext(
      AppModule.forRoot(testConfig(dbB.url, { REPOS_DIR: root }, 'cli')),
      { logger: false, abortOnError: false },
    );
    // A copy of the template holds the template's id: a new database is a new installation.
    await b.get(DataSource).query(`UPDATE installation SET id = gen_random_uuid()`);
    [{ id: idA }] = await a.sql<{ id: string }>(`SELECT id FROM installation`);
    [{ id: idB }] = await b.get(DataSource).query<Array<{ id: string }>>(`SELECT id FROM installation`);
  });
  afterAll(async () => {
    await b?.close();
    if (dbB) await dropTestDatabase(dbB.name);
    await a?.close();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('marks REPOS_DIR at start with the installation its database holds', async () => {
    expect(idA).not.toBe(idB);
    const marker = await readMarker(root);
    expect(marker).toMatchObject({ installation: idA });
    expect(marker!.database).toContain(new URL(a.config.database.url!).pathname.slice(1));
  });

  it('refuses another database on the same REPOS_DIR, naming both; opens nothing there', async () => {
    const refusal = await rejection(b.get(ReposOwnership).installationId());
    expect(refusal).toBeInstanceOf(InstallationMismatchError);
    for (const part of ['REPOS_DIR', root, idA, idB, a.config.database.url!.split('/').pop()!, dbB.name])
      expect({ part, named: refusal.message.includes(part) }).toEqual({ part, named: true });
    // Everything that opens, builds or deletes a repository waits on that claim.
    await expect(b.get(GitStore).ensure(1)).rejects.toThrow(InstallationMismatchError);
    await expect(b.get(GitStore).destroy(1)).rejects.toThrow(InstallationMismatchError);
    expect(fs.readdirSync(root)).toEqual([MARKER_FILE]);
    expect(await readMarker(root)).toMatchObject({ installation: idA });
  });

  it('lets one of two installations starting together on an empty directory claim it', async () => {
    const dir = tmpDir();
    const [first, second] = await Promise.allSettled([
      ownership(a.app, a.config.database.url!, dir),
      ownership(b, dbB.url, dir),
    ]);
    const outcomes = [first, second].map((o) => o.status).sort();
    expect(outcomes).toEqual(['fulfilled', 'rejected']);
    const winner = first.status === 'fulfilled' ? idA : idB;
    const loser = [first, second].find((o) => o.status === 'rejected') as PromiseRejectedResult;
    expect(loser.reason).toBeInstanceOf(InstallationMismatchError);
    expect(await readMarker(dir)).toMatchObject({ installation: winner });
    expect(fs.readdirSync(dir)).toEqual([MARKER_FILE]);
  });

  it('neither opens nor deletes a repository another installation stamped', async () => {
    const deployments = a.app.get(DeploymentsService);
    const workspace = a.app.get(ModelWorkspace);
    const mine = await a.make.deployment();
    const theirs = await a.make.deployment();
    await workspace.open(admin, mine.id, Action.DeploymentRead);
    expect(await readStamp(path.join(root, `${mine.id}.git`))).toBe(idA);
    // Another installation's repository of the same id, with its own work on it.
    const foreign = await bareRepo(root, theirs.id, idB);
    await expectApiError(
      workspace.open(admin, theirs.id, Action.DeploymentRead),
      500,
      'repository_of_another_installation',
    );
    expect(execFileSync('git', ['--git-dir', foreign, 'for-each-ref']).toString()).toBe('');

    await deployments.remove(admin, theirs.id);
    await deployments.remove(admin, mine.id);
    expect(fs.existsSync(path.join(foreign, 'HEAD'))).toBe(true);
    expect(await readStamp(foreign)).toBe(idB);
    expect(fs.existsSync(path.join(root, `${mine.id}.git`))).toBe(false);
  });

  it('adopts a directory from before markers only for the database that set up its repositories there', async () => {
    const d = await a.make.deployment();
    await a.app.get(ModelWorkspace).open(admin, d.id, Action.DeploymentRead);
    const legacy = tmpDir();
    const repo = await bareRepo(legacy, d.id);
    await bareRepo(legacy, d.id + 1000);

    // A database that set up no repository: the directory is someone else's.
    const refused = await rejection(ownership(b, dbB.url, legacy));
    expect(refused).toBeInstanceOf(ReposDirRefusedError);
    expect(refused.message).toContain(`${d.id}.git`);
    expect(refused.message).toContain(idB);
    // A database whose repositories are not there: another directory, or one lost.
    const empty = tmpDir();
    const missing = await rejection(ownership(a.app, a.config.database.url!, empty));
    expect(missing).toBeInstanceOf(ReposDirRefusedError);
    expect(missing.message).toContain(`lacks 1 of the repositories`);
    expect(missing.message).toContain(`${d.id}.git`);
    for (const dir of [legacy, empty]) expect(await readMarker(dir)).toBeNull();

    // The database whose repository is there: marked and stamped as its own.
    expect(await ownership(a.app, a.config.database.url!, legacy)).toBe(idA);
    expect(await readMarker(legacy)).toMatchObject({ installation: idA });
    expect(await readStamp(repo)).toBe(idA);
    expect(await readStamp(path.join(legacy, `${d.id + 1000}.git`))).toBe(idA);
  });
});
