/**
 * Release versions as the catalogue keeps them: the core of a semantic version (`1.6.2`), stored
 * without the `v` of the image tag. Framework-free, so the command line checks its arguments
 * with it before it starts the application.
 */
export interface ReleaseVersion {
  /** `1.6.2`: what `releaseChannelVersion` carries. */
  version: string;
  major: number;
  minor: number;
  patch: number;
}

/**
 * `MAJOR.MINOR.PATCH` with an optional `v`, no leading zeros (semver 2.0.0, section 2), each
 * part below 10^9 so it fits PostgreSQL's integer. Pre-releases and build metadata are not
 * channel releases and are refused.
 */
const SEMVER_CORE = /^v?(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})$/;

/** The release `text` names (`1.6.2` or `v1.6.2`), or null when it is not one. */
export function parseReleaseVersion(text: string): ReleaseVersion | null {
  const m = SEMVER_CORE.exec(text);
  if (!m) return null;
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return { version: `${major}.${minor}.${patch}`, major, minor, patch };
}

/** The image tag of a release: `1.6.2` → `v1.6.2` (the `version` field of the versions list). */
export const imageTag = (version: string): string => `v${version}`;
