/**
 * Where people go on GitHub's web site for a GitHub App, derived from the REST API base URL
 * (`GITHUB_API_URL`). No framework in here: pure functions of the configuration.
 *
 * - github.com: API `https://api.github.com`, site `https://github.com`, App pages under `/apps/`.
 * - GitHub Enterprise Cloud with data residency: API `https://api.SUBDOMAIN.ghe.com`, site
 *   `https://SUBDOMAIN.ghe.com`, App pages under `/apps/` as on github.com.
 * - GitHub Enterprise Server: API `https://HOST/api/v3`, site `https://HOST`, App pages under
 *   `/github-apps/` (GitHub's docs: "http(s)://HOSTNAME/github-apps/APP-NAME/installations/new").
 *   Any other API URL (a test server) is taken for a server of this kind.
 */

export interface GitHubAppLinks {
  /** Installs the App on a user or organization account (choosing the repositories it may see). */
  linkUrl: string;
  /** The signed-in person's installed GitHub Apps, where an installation's repositories are changed. */
  settingsUrl: string;
}

/** The web site that goes with a REST API base URL. */
export function gitHubWebUrl(apiUrl: string): { url: string; appsPath: 'apps' | 'github-apps' } {
  const api = new URL(apiUrl);
  const host = api.hostname.toLowerCase();
  if (host === 'api.github.com') return { url: 'https://github.com', appsPath: 'apps' };
  const residency = /^api\.([a-z0-9-]+\.ghe\.com)$/.exec(host);
  if (residency) return { url: `https://${residency[1]}`, appsPath: 'apps' };
  return { url: api.origin, appsPath: 'github-apps' };
}

export function gitHubAppLinks(apiUrl: string, slug: string): GitHubAppLinks {
  const web = gitHubWebUrl(apiUrl);
  return {
    linkUrl: `${web.url}/${web.appsPath}/${encodeURIComponent(slug)}/installations/new`,
    settingsUrl: `${web.url}/settings/installations`,
  };
}
