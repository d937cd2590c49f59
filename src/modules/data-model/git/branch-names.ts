import { git, text } from '../../../core/git/git.js';

/**
 * The one rule for branch names, wherever a name enters (a request, a connected repository, a
 * generated name): a short name, as `git branch` takes it, that git's ref lookup cannot read as
 * anything else. Every git command names refs in full (`refs/heads/<b>`), so these rules keep a
 * name from aliasing another namespace or another user's branch rather than from guessing.
 */

export const MAX_BRANCH_NAME = 255;

/** Personal dev branches as dev mode names them: `dev-<user id>-<8 hex>`. */
const DEV_FORM = /^dev-\d+-[0-9a-f]{8}$/;
/** The same form in any case: on a case-insensitive file system it is the same loose ref. */
const DEV_FORM_ANY_CASE = /^dev-\d+-[0-9a-f]{8}$/i;
/**
 * Control, format (bidirectional overrides, zero-width characters), surrogate, private-use and
 * unassigned code points, and every separator (spaces, line and paragraph separators): names are
 * shown to people, who must see what they compare.
 */
const NOT_PRINTABLE = /[\p{C}\p{Z}]/u;

/** Whether `name` is a personal dev branch's name (as dev mode makes it). */
export function isDevBranchName(name: string): boolean {
  return DEV_FORM.test(name);
}

export interface BranchNameOptions {
  /** A name being given to a new branch: the dev-branch form is reserved for dev mode. */
  isNew?: boolean;
}

/** What is wrong with `name` without asking git, or null. */
export function branchNameRuleProblem(name: string, options: BranchNameOptions = {}): string | null {
  if (name === '') return 'must not be empty';
  if (name.length > MAX_BRANCH_NAME) return `must be at most ${MAX_BRANCH_NAME} characters`;
  if (NOT_PRINTABLE.test(name)) {
    return 'must hold printable characters only (no control, format, separator, private-use or unassigned characters)';
  }
  if (/^refs\//i.test(name)) return 'must be a short branch name, without refs/';
  if (name.includes('@{')) return 'must not contain @{';
  if (/^(HEAD|@)$/i.test(name)) return 'is reserved by git';
  if (name.startsWith('-')) return 'must not start with -';
  if (DEV_FORM_ANY_CASE.test(name) && (options.isNew || !DEV_FORM.test(name))) {
    return 'has the form of a personal dev branch (dev-<user>-<8 hex>), which only dev mode creates';
  }
  return null;
}

/** Names git accepted, so hot reads do not start git for the same name again; bounded. */
const accepted = new Set<string>();
const MAX_REMEMBERED = 2000;

/**
 * What is wrong with `name` as a branch name, or null when it is one: {@link branchNameRuleProblem},
 * then git's own checks (`git check-ref-format --branch`, and the full ref form).
 */
export async function branchNameProblem(
  name: string,
  options: BranchNameOptions = {},
): Promise<string | null> {
  const rule = branchNameRuleProblem(name, options);
  if (rule) return rule;
  if (accepted.has(name)) return null;
  // `--branch` applies the rules for names users type; the full form those of refs.
  const asBranch = await git(null, ['check-ref-format', '--branch', name], { okCodes: [1, 128] });
  const asRef =
    asBranch.code === 0 && text(asBranch) === name
      ? await git(null, ['check-ref-format', `refs/heads/${name}`], { okCodes: [1, 128] })
      : null;
  if (asRef?.code !== 0) return 'is not a valid git branch name (git check-ref-format --branch)';
  if (accepted.size >= MAX_REMEMBERED) accepted.delete(accepted.values().next().value as string);
  accepted.add(name);
  return null;
}
