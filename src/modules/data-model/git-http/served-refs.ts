import { isDevBranchName } from '../git/branch-names.js';
import { branchRef } from '../git/git-store.js';

/** One git configuration entry, `-c <key>=<value>`. */
export type GitConfigEntry = readonly [key: string, value: string];

/**
 * The refs a caller is served, as `uploadpack.hideRefs` entries: shared branches and the caller's
 * own personal dev branches, never pending changes (`refs/pending/*`), other users' dev branches
 * or anything else under `refs/`.
 *
 * git matches a hideRefs entry by whole path components (`refs/heads/dev-` hides nothing of
 * `refs/heads/dev-5-abcdef12`), the last matching entry wins, and `!` serves what it names. So
 * everything is hidden, then each served branch is named exactly: a branch made after `branches`
 * was listed (another user's new dev branch, say) stays hidden, never served by mistake. HEAD is
 * not under `refs/`: it names the deploy branch, a shared one.
 */
export function servedRefs(branches: Iterable<string>, callerUserId: number): GitConfigEntry[] {
  const own = `dev-${callerUserId}-`;
  const entries: GitConfigEntry[] = [['uploadpack.hideRefs', 'refs/']];
  for (const name of branches) {
    if (!isDevBranchName(name) || name.startsWith(own))
      entries.push(['uploadpack.hideRefs', `!${branchRef(name)}`]);
  }
  return entries;
}

/**
 * Configuration as environment variables (`GIT_CONFIG_COUNT`, `GIT_CONFIG_KEY_<n>`,
 * `GIT_CONFIG_VALUE_<n>`): the command line's precedence without its length limit, since there
 * is one entry per served branch.
 */
export function configEnv(entries: readonly GitConfigEntry[]): Record<string, string> {
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(entries.length) };
  entries.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}
