export const CLOUD_PROVIDERS = ['cubecloud', 'aws', 'gcp'] as const;
export const CREATION_METHODS = ['upload', 'cubecloud', 'github', 'ssh'] as const;
export const DEPLOY_MODES = ['git', 'cli'] as const;
export const CREATION_STEPS = [
  'project',
  'upload',
  'schema',
  'github',
  'ssh',
  'databases',
  'ready',
  'demo',
] as const;
export type CreationStep = (typeof CREATION_STEPS)[number];

/**
 * The setup wizard's steps in the reference's order. `advance` moves to a later step of this
 * order (steps may be skipped: an upload needs no GitHub step) or stays (a retry); `demo` is
 * reached from `project` only and, like `ready`, ends the wizard; `reset` goes back to `project`.
 */
export const CREATION_STEP_ORDER: readonly CreationStep[] = CREATION_STEPS.filter((s) => s !== 'demo');

/** Whether the wizard may go from `from` to `to` with `advance`. */
export function canAdvance(from: string, to: CreationStep): boolean {
  if (from === to) return true;
  if (to === 'demo') return from === 'project';
  const a = CREATION_STEP_ORDER.indexOf(from as CreationStep);
  const b = CREATION_STEP_ORDER.indexOf(to);
  return a >= 0 && b > a;
}

export const RELEASE_CHANNELS = ['latest', 'release'] as const;
export const TEMPLATES = ['single', 'simpleCluster', 'multiCluster'] as const;

export type ReleaseChannel = (typeof RELEASE_CHANNELS)[number];
