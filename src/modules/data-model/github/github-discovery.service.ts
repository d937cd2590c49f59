import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../core/auth/principal.js';
import { coreError } from '../../../core/errors/api-error.js';
import { isNotFound } from '../../../core/errors/not-found.js';
import {
  encodeCursor,
  resolvePaging,
  type PageInfo,
  type PageQueryDto,
} from '../../../core/http/pagination.js';
import type {
  GitHubBranchDto,
  GitHubBranchesListDto,
  GitHubInstallationDto,
  GitHubInstallationsListDto,
  GitHubRepositoriesListDto,
  GitHubRepositoryDto,
  GitHubStatusDto,
} from './dto/github.dto.js';
import { GitHubInstallations } from './github-installations.service.js';
import { GitHost, type GitHubInstallation, type GitHubSlice, type GitHubWindow } from './github.client.js';

/** At most this many installations are read from GitHub at once while a page is filled. */
const INSTALLATION_READS_IN_FLIGHT = 8;

/**
 * The discovery routes a person uses while connecting a deployment to a repository: which
 * installations of the App their account has linked, which repositories and branches those see.
 * Every route is scoped to the caller's account: an installation the account has not linked is
 * a 404, like one GitHub does not know.
 *
 * The installations list pages over the account's links (the cursor is an installation id).
 * Repositories and branches are GitHub's lists, which GitHub pages by number, so their cursor is
 * an item's position in GitHub's list (GitHub keeps no keyset to resume from): a list that
 * changes between two pages may repeat or skip an item, as GitHub's own paging does.
 */
@Injectable()
export class GitHubDiscoveryService {
  constructor(
    private readonly git: GitHost,
    private readonly installs: GitHubInstallations,
  ) {}

  /**
   * `connected`: the caller's account has linked at least one installation (read from our
   * table, not from GitHub). Without an App: 409 `github_not_configured`, as every GitHub route
   * answers.
   */
  async status(actor: Principal): Promise<GitHubStatusDto> {
    this.git.requireConfigured();
    const linkUrl = this.installs.linkUrl(actor);
    const { settingsUrl } = this.git.links();
    const connected = this.installs.linkingRequired
      ? await this.installs.hasAny(actor.accountId)
      : (await this.git.installations({ offset: 0, limit: 1 })).items.length > 0;
    return { connected, linkUrl, settingsUrl };
  }

  /**
   * A page of the account's linked installations, each read from GitHub (App JWT). One GitHub no
   * longer has (uninstalled; GitHub never reuses an id) is left out and its link forgotten, so a
   * page may hold fewer than `first` items while `hasNextPage` is true.
   */
  async installations(actor: Principal, query: PageQueryDto): Promise<GitHubInstallationsListDto> {
    this.git.requireConfigured();
    if (!this.installs.linkingRequired) {
      // Every installation of the App, in GitHub's order (`GITHUB_INSTALLATION_LINKING=off`).
      const window = windowOf(query);
      return listOf(await this.git.installations(window), window, query, toInstallationDto);
    }
    const paging = resolvePaging(query, ['number']);
    if (paging.mode !== 'cursor') throw coreError('pagination_conflict', 'Use first/after');
    const after = paging.after ? (paging.after[0] as number) : null;
    if (after !== null && after < 1) throw invalidCursor();
    const ids = await this.installs.page(actor.accountId, after, paging.first + 1);
    const scanned = ids.slice(0, paging.first);
    const found = await inBatches(scanned, INSTALLATION_READS_IN_FLIGHT, async (id) => {
      try {
        return await this.git.installation(id);
      } catch (err) {
        if (!isNotFound(err, 'GitHubInstallation')) throw err;
        await this.installs.forget(actor.accountId, id);
        return null;
      }
    });
    const items = found.filter((i): i is GitHubInstallation => i !== null).map(toInstallationDto);
    const n = scanned.length;
    return {
      items,
      // The deprecated copy is the same array: the JSON body writer serialises it once.
      data: items,
      pageInfo: {
        hasNextPage: ids.length > paging.first,
        hasPreviousPage: after !== null,
        startCursor: n ? encodeCursor([scanned[0]]) : null,
        endCursor: n ? encodeCursor([scanned[n - 1]]) : null,
      },
    };
  }

  async repositories(
    actor: Principal,
    installationId: number,
    query: PageQueryDto,
  ): Promise<GitHubRepositoriesListDto> {
    this.git.requireConfigured();
    const window = windowOf(query);
    await this.installs.requireLinked(actor.accountId, installationId);
    const slice = await this.git.repositories(installationId, window);
    return listOf(slice, window, query, (r): GitHubRepositoryDto => ({
      id: r.id,
      name: r.name,
      fullName: r.fullName,
      htmlUrl: r.htmlUrl,
    }));
  }

  async branches(
    actor: Principal,
    installationId: number,
    owner: string,
    repo: string,
    query: PageQueryDto,
  ): Promise<GitHubBranchesListDto> {
    this.git.requireConfigured();
    const window = windowOf(query);
    await this.installs.requireLinked(actor.accountId, installationId);
    const slice = await this.git.branches(installationId, owner, repo, window);
    return listOf(slice, window, query, (b): GitHubBranchDto => ({ name: b.name, isDefault: b.isDefault }));
  }
}

const invalidCursor = () => coreError('invalid_cursor', 'after is not a cursor returned by this list');

/** `first`/`after` as a window of GitHub's list: the cursor is the position of the last item seen. */
function toInstallationDto(i: GitHubInstallation): GitHubInstallationDto {
  return { id: String(i.accountId), installationId: String(i.id), login: i.login, avatarUrl: i.avatarUrl };
}

function windowOf(query: PageQueryDto): GitHubWindow {
  const paging = resolvePaging(query, ['number']);
  if (paging.mode !== 'cursor') throw coreError('pagination_conflict', 'Use first/after');
  const last = paging.after ? (paging.after[0] as number) : -1;
  if (last < 0 && paging.after) throw invalidCursor();
  return { offset: last + 1, limit: paging.first };
}

function listOf<T, D>(
  slice: GitHubSlice<T>,
  window: GitHubWindow,
  query: PageQueryDto,
  map: (item: T) => D,
): { items: D[]; data: D[]; pageInfo: PageInfo } {
  const items = slice.items.map(map);
  const n = items.length;
  return {
    items,
    // The deprecated copy is the same array: the JSON body writer serialises it once.
    data: items,
    pageInfo: {
      hasNextPage: slice.hasMore,
      hasPreviousPage: query.after !== undefined,
      startCursor: n ? encodeCursor([window.offset]) : null,
      endCursor: n ? encodeCursor([window.offset + n - 1]) : null,
    },
  };
}

/** `work` over `items`, at most `size` at a time, results in the order of `items`. */
async function inBatches<T, R>(items: T[], size: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) {
    out.push(...(await Promise.all(items.slice(i, i + size).map(work))));
  }
  return out;
}
