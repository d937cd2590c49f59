import { randomBytes } from 'node:crypto';

/**
 * The rules of dbt syncs that need no database: branch names, refs, and how a run's phase reads
 * as the reference's stages.
 */

/** The generated branches' prefix: `dbt-sync/<ref segment>-<YYYYMMDDHHMMSS>-<8 hex>`. */
export const SYNC_BRANCH_PREFIX = 'dbt-sync/';

/** The segment standing for a posted manifest that names no ref. */
export const MANIFEST_SEGMENT = 'manifest';

const SEGMENT_MAX = 40;

/**
 * The ref as it appears in a generated branch name, by the reference's rule: ASCII letters,
 * digits, `_`, `.` and `-` kept with their case; `/`, space and `~` become `-`; a leading `#` is
 * dropped; cut at 40 characters (`refs/heads/main` -> `refs-heads-main`). Beyond the rule, so the
 * name is always a valid git branch name: any other character becomes `-`, `..` becomes `.`, and
 * a leading `.` is dropped.
 */
export function refSegment(ref: string): string {
  const segment = ref
    .replace(/^#+/, '')
    .replace(/[^A-Za-z0-9_.-]/g, '-')
    .replace(/\.{2,}/g, '.')
    .replace(/^\.+/, '')
    .slice(0, SEGMENT_MAX);
  return segment === '' ? 'ref' : segment;
}

/** `YYYYMMDDHHMMSS` of an instant, in UTC. */
export function compactTimestamp(at: Date): string {
  return at.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

/** A fresh branch name for a sync of `ref` (null: a posted manifest without a ref). */
export function syncBranchName(ref: string | null, at: Date, hex = randomBytes(4).toString('hex')): string {
  return `${SYNC_BRANCH_PREFIX}${ref === null ? MANIFEST_SEGMENT : refSegment(ref)}-${compactTimestamp(at)}-${hex}`;
}

/**
 * Whether a `ref` looks like a commit id, which a sync refuses (it reads a branch or a tag): a
 * full SHA-1 or SHA-256 (40 or 64 hexadecimal digits), or an abbreviated one (7 to 39) mixing
 * digits and the letters a-f. A name of digits only (`20260817`) or of letters only (`deadbeef`)
 * is taken as the branch or tag name it may well be.
 */
export function looksLikeCommitSha(ref: string): boolean {
  if (!/^[0-9a-f]+$/i.test(ref)) return false;
  if (ref.length === 40 || ref.length === 64) return true;
  return ref.length >= 7 && ref.length < 40 && /[0-9]/.test(ref) && /[a-f]/i.test(ref);
}

/** The stages of the reference's status, in pipeline order, with the share of the work done. */
export const STAGES = {
  INITIALIZING: 0,
  CREATING_SANDBOX: 5,
  UPLOADING_PROJECT: 15,
  INSTALLING_DEPENDENCIES: 25,
  RUNNING_DBT_DEPS: 35,
  COMPILING_DBT: 50,
  PROCESSING_MANIFEST: 65,
  WRITING_CUBE_FILES: 80,
  FINALIZING: 95,
  COMPLETED: 100,
  FAILED: 100,
} as const;

export type SyncStage = keyof typeof STAGES;

/** The phases of a sync run (the `phase` of its run and log lines), in the order they run. */
export const PHASES = {
  /** Source `git`: the shallow fetch of the ref and the read of `target/manifest.json`. */
  'repo-clone': { stage: 'UPLOADING_PROJECT', doing: 'Fetching the dbt project from its repository' },
  /** Source `manifest`: the posted manifest, read back from where the start stored it. */
  'manifest-load': { stage: 'UPLOADING_PROJECT', doing: 'Loading the posted manifest' },
  'manifest-parse': { stage: 'PROCESSING_MANIFEST', doing: 'Reading the dbt manifest' },
  'cube-generate': { stage: 'PROCESSING_MANIFEST', doing: 'Converting dbt models into cubes' },
  /** Output `branch`: one commit of the cube files on the sync's branch, and a build recorded. */
  'branch-commit': { stage: 'WRITING_CUBE_FILES', doing: 'Committing the cube files to the branch' },
  /** Output `files`: the cube files kept with the sync, for `GET .../generated-files`. */
  'files-store': { stage: 'WRITING_CUBE_FILES', doing: 'Storing the generated cube files' },
  finalize: { stage: 'FINALIZING', doing: 'Recording the result' },
} as const satisfies Record<string, { stage: SyncStage; doing: string }>;

export type SyncPhase = keyof typeof PHASES;

/** The stage a run in `phase` is at; before its first phase (or an unknown one): INITIALIZING. */
export function stageOfPhase(phase: string | null): SyncStage {
  return phase !== null && Object.hasOwn(PHASES, phase) ? PHASES[phase as SyncPhase].stage : 'INITIALIZING';
}

/** Run statuses of the job framework, as the history names them. */
export const HISTORY_STATUS = {
  queued: 'RUNNING',
  running: 'RUNNING',
  succeeded: 'COMPLETED',
  failed: 'FAILED',
  cancelled: 'CANCELLED',
} as const;

export const HISTORY_STATUSES = ['RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED', 'UNKNOWN'] as const;
export type HistoryStatus = (typeof HISTORY_STATUSES)[number];

export const TRIGGERS = ['manual', 'api', 'webhook', 'agent', 'unknown'] as const;
export type SyncTrigger = (typeof TRIGGERS)[number];

/** The run statuses a history status filter selects (UNKNOWN: none, this service never loses a run). */
export function runStatusesOf(status: HistoryStatus): string[] {
  return Object.entries(HISTORY_STATUS)
    .filter(([, s]) => s === status)
    .map(([run]) => run);
}
