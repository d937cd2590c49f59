import { Injectable } from '@nestjs/common';
import { ContentImpact, type ImpactItem } from '../data-model/content-impact.port.js';
import type { ModelSummary } from '../data-model/model-summary.js';
import { EmbedAccessService } from '../embedding/embed-access.service.js';
import { NotificationsService } from '../notifications/notifications.service.js';
import { ReportsService } from '../reports/reports.service.js';
import { DashboardsService } from '../workspace/dashboards.service.js';
import {
  dashboardFilterMembers,
  dashboardReportIds,
  notificationMembers,
  parseQuery,
  queryMembers,
} from './content-members.js';
import { memberBreaks, memberPath, type MemberBreak } from './member-breaks.js';

const TYPE_ORDER: Record<ImpactItem['type'], number> = { report: 0, dashboard: 1, notification: 2 };

/** One item's broken members, by the member path. */
type Breaks = Map<string, MemberBreak>;

/**
 * The content impact of a model change (issue 33, docs/data-model.md "Content impact"): the
 * stored reports, published dashboards and scheduled notifications of a deployment that work on
 * the base model and break on the head model, with the embed tenants that see each. One query
 * per kind of content (and one for the tenants), read through the owning modules' services; the
 * stored queries and configs are parsed here, in process.
 */
@Injectable()
export class ContentImpactService extends ContentImpact {
  constructor(
    private readonly reports: ReportsService,
    private readonly dashboards: DashboardsService,
    private readonly notifications: NotificationsService,
    private readonly embedAccess: EmbedAccessService,
  ) {
    super();
  }

  async between(
    accountId: number,
    deploymentId: number,
    base: ModelSummary,
    head: ModelSummary,
    renames: ReadonlyMap<string, string>,
  ): Promise<ImpactItem[]> {
    const { breaks, usable } = memberBreaks(base, head, renames);
    // Nothing of the base model breaks: no content can, and nothing is read.
    if (breaks.size === 0) return [];

    /**
     * The members of `named` that break, or null when the item is already broken on base (it
     * names a member that base does not have or hides). `Cube.member.granularity` is its member.
     */
    const breaksOf = (named: Iterable<string>): Breaks | null => {
      const out: Breaks = new Map();
      for (const name of named) {
        const path = memberPath(name, usable);
        const was = path === null ? undefined : usable.get(path);
        if (!was?.visible) return null;
        const hit = breaks.get(path!);
        if (hit) out.set(path!, hit);
      }
      return out;
    };

    const reports = new Map<number, { name: string; breaks: Breaks }>();
    /** Dashboards whose last publish took each report (its snapshots). */
    const snapshotsOf = new Map<number, number[]>();
    for (const r of await this.reports.jsonQueries(accountId, deploymentId)) {
      const query = parseQuery(r.jsonQuery);
      if (query === null) continue;
      const found = breaksOf(queryMembers(query));
      if (found && found.size > 0) reports.set(r.id, { name: r.name, breaks: found });
      for (const d of r.dashboardIds ?? []) append(snapshotsOf, d, r.id);
    }

    const dashboards = new Map<number, { name: string; workbookId: number; breaks: Breaks }>();
    /** The published dashboards that show each broken report. */
    const shownOn = new Map<number, number[]>();
    for (const d of await this.dashboards.publishedOfDeployment(accountId, deploymentId)) {
      const own = breaksOf(dashboardFilterMembers(d.config));
      const found: Breaks = new Map(own ?? []);
      const shows = new Set([...dashboardReportIds(d.config), ...(snapshotsOf.get(d.id) ?? [])]);
      for (const id of shows) {
        const report = reports.get(id);
        if (!report) continue;
        append(shownOn, id, d.id);
        for (const [member, hit] of report.breaks) if (!found.has(member)) found.set(member, hit);
      }
      dashboards.set(d.id, { name: d.name, workbookId: d.workbookId, breaks: found });
    }

    const notifications: Array<{
      id: number;
      name: string;
      dashboardId: number;
      tenants: string[];
      breaks: Breaks;
    }> = [];
    for (const n of await this.notifications.overridesOfDeployment(accountId, deploymentId)) {
      const dashboard = dashboards.get(n.dashboardId);
      const found: Breaks = new Map(breaksOf(notificationMembers(n)) ?? []);
      for (const [member, hit] of dashboard?.breaks ?? []) if (!found.has(member)) found.set(member, hit);
      if (found.size === 0) continue;
      const name = `${dashboard?.name ?? `Dashboard ${n.dashboardId}`}: ${n.schedule}`;
      notifications.push({
        id: n.id,
        name,
        dashboardId: n.dashboardId,
        tenants: n.embedTenants ?? [],
        breaks: found,
      });
    }

    // The tenants: through the shares of the workbooks of the dashboards that are listed, show a
    // listed report, or are mailed by a listed notification.
    const workbooks = new Set<number>();
    for (const d of dashboards.values()) if (d.breaks.size > 0) workbooks.add(d.workbookId);
    for (const n of notifications) {
      const d = dashboards.get(n.dashboardId);
      if (d) workbooks.add(d.workbookId);
    }
    const shared = await this.embedAccess.tenantsByWorkbook(accountId, [...workbooks]);
    const tenantsOfDashboard = (id: number): string[] => {
      const d = dashboards.get(id);
      return d ? (shared.get(d.workbookId) ?? []) : [];
    };

    const items: ImpactItem[] = [];
    const push = (type: ImpactItem['type'], id: number, name: string, found: Breaks, tenants: string[]) => {
      const sorted = sortedUnique(tenants);
      for (const [member, hit] of found) {
        items.push({
          type,
          id,
          name,
          member,
          reason: hit.reason,
          ...(hit.renamedTo !== undefined ? { renamedTo: hit.renamedTo } : {}),
          tenants: [...sorted],
        });
      }
    };
    for (const [id, r] of reports) {
      push('report', id, r.name, r.breaks, (shownOn.get(id) ?? []).flatMap(tenantsOfDashboard));
    }
    for (const [id, d] of dashboards) push('dashboard', id, d.name, d.breaks, tenantsOfDashboard(id));
    for (const n of notifications) {
      push('notification', n.id, n.name, n.breaks, [...tenantsOfDashboard(n.dashboardId), ...n.tenants]);
    }
    return items.sort(
      (a, b) =>
        TYPE_ORDER[a.type] - TYPE_ORDER[b.type] ||
        a.id - b.id ||
        (a.member < b.member ? -1 : a.member > b.member ? 1 : 0),
    );
  }
}

function append(map: Map<number, number[]>, key: number, value: number): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function sortedUnique(names: readonly string[]): string[] {
  return [...new Set(names)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
