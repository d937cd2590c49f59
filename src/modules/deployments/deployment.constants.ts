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
export const RELEASE_CHANNELS = ['latest', 'release'] as const;
export const TEMPLATES = ['single', 'simpleCluster', 'multiCluster'] as const;

export type ReleaseChannel = (typeof RELEASE_CHANNELS)[number];

/**
 * Versions each release channel offers, newest first. A deployment may pin
 * `releaseChannelVersion` only to one of these for its channel.
 */
export const RELEASE_CHANNEL_VERSIONS: Readonly<Record<ReleaseChannel, readonly string[]>> = {
  latest: ['1.6.2', '1.6.1', '1.6.0', '1.5.9'],
  release: ['1.5.9', '1.5.8', '1.5.7'],
};
