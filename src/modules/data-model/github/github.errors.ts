import { errorsOf } from '../../../core/errors/api-error.js';

/**
 * What the GitHub module answers besides `notFound('GitHubInstallation' | 'GitHubRepository')`:
 * no App configured on this installation (409, naming the settings), GitHub failing, refusing the
 * App or out of reach (502), a request GitHub cannot carry out for that installation (400: a
 * repository in a personal account), a bad repository name (400), a repository that exists
 * already (409), and a setup redirect that does not prove a link (400: its state, or GitHub's
 * record of the installation).
 */
export const gitHubError = errorsOf(
  'github_not_configured',
  'github_unavailable',
  'bad_request',
  'validation_failed',
  'conflict',
  'invalid_github_state',
  'github_link_unverified',
);
