export { GitHubModule } from './github.module.js';
export {
  GitHost,
  GitHubAppClient,
  GITHUB_REQUEST_TIMEOUT_MS,
  TOKEN_REFRESH_MARGIN_MS,
  parseRepositoryName,
  type GitHubAppLinks,
  type GitHubBranch,
  type GitHubInstallation,
  type GitHubRepository,
  type GitHubRepositorySummary,
  type GitHubSlice,
  type GitHubWindow,
} from './github.client.js';
export { gitHubError } from './github.errors.js';
export { GitHubInstallations } from './github-installations.service.js';
