import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { EMBEDDED_DATABASE, type InstallationIdentity } from './installation.js';

/** The file in a directory of state that names the installation it belongs to. */
export const MARKER_FILE = 'installation.json';

/** What the marker says: the installation, and for people, its database and when it marked. */
export interface InstallationMarker {
  installation: string;
  database?: string;
  markedAt?: string;
}

/** The directory's marker, or null when it has none (or the directory is not there). */
export async function readMarker(dir: string): Promise<InstallationMarker | null> {
  const file = path.join(dir, MARKER_FILE);
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  let marker: unknown;
  try {
    marker = JSON.parse(text);
  } catch {
    marker = null;
  }
  const installation = (marker as { installation?: unknown } | null)?.installation;
  if (typeof installation !== 'string' || installation.trim() === '')
    throw new Error(
      `${file} is not an installation marker (JSON with "installation": the id of the installation ` +
        'the directory belongs to). Move it away only if you know which installation the directory belongs to.',
    );
  return { ...(marker as InstallationMarker), installation: installation.trim() };
}

/**
 * Marks the directory as this installation's unless it is marked already, and answers the marker
 * that stands: ours, or another installation's that got there first (two processes starting
 * together). The marker appears whole or not at all: written aside, then linked into place,
 * which fails when a marker is there (a file system without hard links gets an exclusive create).
 */
export async function markDirectory(dir: string, me: InstallationIdentity): Promise<InstallationMarker> {
  await fs.mkdir(dir, { recursive: true });
  const file = path.join(dir, MARKER_FILE);
  const marker: InstallationMarker = {
    installation: me.id,
    database: me.database,
    markedAt: new Date().toISOString(),
  };
  const text = `${JSON.stringify(marker, null, 2)}\n`;
  const tmp = path.join(dir, `.${MARKER_FILE}.${randomBytes(6).toString('hex')}`);
  await fs.writeFile(tmp, text, { flag: 'wx' });
  try {
    await fs.link(tmp, file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'ENOSYS') {
      await fs.writeFile(file, text, { flag: 'wx' }).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== 'EEXIST') throw e;
      });
    } else if (code !== 'EEXIST') throw err;
  } finally {
    await fs.rm(tmp, { force: true });
  }
  const standing = await readMarker(dir);
  if (!standing) throw new Error(`${file} vanished while it was being written`);
  return standing;
}

/** Another installation's marker where this one keeps its state: the process must not start. */
export class InstallationMismatchError extends Error {
  constructor(
    readonly dir: string,
    readonly marker: InstallationMarker,
    readonly me: InstallationIdentity,
    setting: string,
  ) {
    const owner = marker.database
      ? `installation ${marker.installation} (its database: ${marker.database})`
      : `installation ${marker.installation}`;
    const theirs = marker.database?.startsWith(EMBEDDED_DATABASE)
      ? `use the database of installation ${marker.installation} (leave DATABASE_URL unset, with DATA_DIR as it was)`
      : `set DATABASE_URL to the database of installation ${marker.installation}`;
    super(
      `${setting} ${dir} belongs to another installation: ${owner}, as ${path.join(dir, MARKER_FILE)} says. ` +
        `This process's database (${me.database}) is installation ${me.id}. Two installations never share ` +
        `${setting}: set ${setting} to a directory of this installation's own (an empty one for a new ` +
        `database), or ${theirs}.`,
    );
    this.name = 'InstallationMismatchError';
  }
}
