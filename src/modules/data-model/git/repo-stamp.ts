import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/** The file in a bare repository naming the installation that made it (git ignores it). */
export const STAMP_FILE = 'platform-installation';

/**
 * The installation a repository says it belongs to: its id; null for a repository without a
 * stamp (made before stamps); undefined when there is no repository at `dir`.
 */
export async function readStamp(dir: string): Promise<string | null | undefined> {
  try {
    return (await fs.readFile(path.join(dir, STAMP_FILE), 'utf8')).trim() || null;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  try {
    await fs.access(path.join(dir, 'HEAD'));
    return null;
  } catch {
    return undefined;
  }
}

/** Stamps a repository with the installation's id; written aside and renamed, so it is read whole. */
export async function writeStamp(dir: string, installationId: string): Promise<void> {
  const tmp = path.join(dir, `${STAMP_FILE}.${randomBytes(6).toString('hex')}`);
  await fs.writeFile(tmp, `${installationId}\n`, { flag: 'wx' });
  try {
    await fs.rename(tmp, path.join(dir, STAMP_FILE));
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
}

/** The deployment ids of the repositories in `root` (`<id>.git` holding a HEAD). */
export async function repositoryIds(root: string): Promise<number[]> {
  let names: string[];
  try {
    names = await fs.readdir(root);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const ids: number[] = [];
  for (const name of names) {
    const m = /^([1-9]\d*)\.git$/.exec(name);
    if (!m) continue;
    try {
      await fs.access(path.join(root, name, 'HEAD'));
      ids.push(Number(m[1]));
    } catch {
      // Not a repository.
    }
  }
  return ids.sort((a, b) => a - b);
}
