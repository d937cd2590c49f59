/** The role actions of the specification, spelled as on the wire. */
export enum Action {
  All = 'All',
  DeploymentsManage = 'DeploymentsManage',
  DeploymentCreate = 'DeploymentCreate',
  DeploymentRead = 'DeploymentRead',
  DeploymentUpdate = 'DeploymentUpdate',
  DeploymentDelete = 'DeploymentDelete',
  SecretsManage = 'SecretsManage',
  DownloadData = 'DownloadData',
  PlaygroundRead = 'PlaygroundRead',
  SchemaRead = 'SchemaRead',
  SchemaUpdate = 'SchemaUpdate',
  SchemaUpdateDevBranches = 'SchemaUpdateDevBranches',
  APMRead = 'APMRead',
  PreAggregationBuild = 'PreAggregationBuild',
  AlertsCreate = 'AlertsCreate',
  AlertsRead = 'AlertsRead',
  AlertsUpdate = 'AlertsUpdate',
  AlertsDelete = 'AlertsDelete',
  AuditLogManage = 'AuditLogManage',
  BillingRead = 'BillingRead',
  SqlRunnerRead = 'SqlRunnerRead',
  DataAssetsRead = 'DataAssetsRead',
  DataAssetsManage = 'DataAssetsManage',
  CubeNetworkConnect = 'CubeNetworkConnect',
  ReportRead = 'ReportRead',
  ReportEdit = 'ReportEdit',
  ReportManage = 'ReportManage',
  WorkbookManage = 'WorkbookManage',
  WorkbookRead = 'WorkbookRead',
  WorkbookEdit = 'WorkbookEdit',
  ChatThreadRead = 'ChatThreadRead',
  AgentManage = 'AgentManage',
  AgentRead = 'AgentRead',
  AgentSpaceManage = 'AgentSpaceManage',
  AgentAdmin = 'AgentAdmin',
  DeploymentAgentRead = 'DeploymentAgentRead',
  OAuthIntegrationsManage = 'OAuthIntegrationsManage',
  OAuthIntegrationsIssueTokens = 'OAuthIntegrationsIssueTokens',
  McpToolsManage = 'McpToolsManage',
  AIBIDevelop = 'AIBIDevelop',
  AIBIExplore = 'AIBIExplore',
  AIBIView = 'AIBIView',
  ChartPalettesManage = 'ChartPalettesManage',
  DashboardThemesManage = 'DashboardThemesManage',
  AIBIDeveloper = 'AIBIDeveloper',
  AIBIUser = 'AIBIUser',
  AIBIViewer = 'AIBIViewer',
  EmbedDeploymentRead = 'EmbedDeploymentRead',
  EmbedDashboardRead = 'EmbedDashboardRead',
  FolderRead = 'FolderRead',
  FolderEdit = 'FolderEdit',
  FolderManage = 'FolderManage',
}

export const ALL_ACTIONS: readonly Action[] = Object.values(Action);

/** What holding an action also grants. `All` grants every action. */
const IMPLIES: Partial<Record<Action, readonly Action[]>> = {
  [Action.DeploymentsManage]: [
    Action.DeploymentCreate,
    Action.DeploymentRead,
    Action.DeploymentUpdate,
    Action.DeploymentDelete,
  ],
  [Action.DeploymentUpdate]: [Action.DeploymentRead],
  [Action.DeploymentDelete]: [Action.DeploymentRead],
  [Action.SchemaUpdate]: [Action.SchemaRead, Action.SchemaUpdateDevBranches],
  [Action.SchemaUpdateDevBranches]: [Action.SchemaRead],
  [Action.DataAssetsManage]: [Action.DataAssetsRead],
  [Action.ReportManage]: [Action.ReportEdit],
  [Action.ReportEdit]: [Action.ReportRead],
  [Action.WorkbookManage]: [Action.WorkbookEdit],
  [Action.WorkbookEdit]: [Action.WorkbookRead],
  [Action.FolderManage]: [Action.FolderEdit],
  [Action.FolderEdit]: [Action.FolderRead],
  [Action.AgentManage]: [Action.AgentRead],
  [Action.AgentAdmin]: [Action.AgentManage, Action.AgentSpaceManage],
};

/** The closure of a set of actions under {@link IMPLIES}. */
export function expandActions(actions: Iterable<string>): Set<Action> {
  const out = new Set<Action>();
  const stack = [...actions].filter((a): a is Action => ALL_ACTIONS.includes(a as Action));
  if (stack.includes(Action.All)) return new Set(ALL_ACTIONS);
  while (stack.length > 0) {
    const a = stack.pop()!;
    if (out.has(a)) continue;
    out.add(a);
    for (const b of IMPLIES[a] ?? []) stack.push(b);
  }
  return out;
}

/** Every action that, held, grants `action` (itself included). */
export function actionsGranting(action: Action): Action[] {
  return ALL_ACTIONS.filter((a) => expandActions([a]).has(action));
}

export interface BuiltInRole {
  name: string;
  actions: readonly Action[];
}

/**
 * Roles every account has, named as on the reference platform (its custom roles may not take
 * these names). A user lists them by name in `defaultRoles`.
 */
export const BUILT_IN_ROLES: readonly BuiltInRole[] = [
  { name: 'Admin', actions: [Action.All] },
  {
    name: 'Developer',
    actions: [
      Action.DeploymentsManage,
      Action.SchemaUpdate,
      Action.PlaygroundRead,
      Action.SqlRunnerRead,
      Action.DataAssetsManage,
      Action.PreAggregationBuild,
      Action.ReportManage,
      Action.WorkbookManage,
      Action.FolderManage,
      Action.DownloadData,
    ],
  },
  {
    name: 'AIBIDeveloper',
    actions: [
      Action.DeploymentRead,
      Action.PlaygroundRead,
      Action.ReportManage,
      Action.WorkbookManage,
      Action.FolderManage,
      Action.DownloadData,
    ],
  },
  {
    name: 'AIBIUser',
    actions: [
      Action.DeploymentRead,
      Action.PlaygroundRead,
      Action.ReportEdit,
      Action.WorkbookEdit,
      Action.FolderEdit,
      Action.DownloadData,
    ],
  },
  {
    name: 'AIBIViewer',
    actions: [Action.DeploymentRead, Action.ReportRead, Action.WorkbookRead, Action.FolderRead],
  },
  { name: 'D3User', actions: [Action.DeploymentRead, Action.AgentRead, Action.ChatThreadRead] },
  { name: 'EmbedUser', actions: [Action.EmbedDeploymentRead, Action.EmbedDashboardRead] },
  // Sees only what is shared with the user through grants.
  { name: 'Guest', actions: [] },
];

export const BUILT_IN_ROLE_NAMES = BUILT_IN_ROLES.map((r) => r.name);

/**
 * Names this service used before it took the reference's. Accepted on input and stored under
 * the new name; migration `BuiltInRoleNames1764200000010` renamed the stored ones.
 */
export const LEGACY_ROLE_NAMES: Readonly<Record<string, string>> = {
  Explorer: 'AIBIUser',
  Viewer: 'AIBIViewer',
};

/** A role list with legacy names replaced by the current ones; anything else is left to validation. */
export function canonicalRoleNames(value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  return value.map((n) =>
    typeof n === 'string' && Object.hasOwn(LEGACY_ROLE_NAMES, n) ? LEGACY_ROLE_NAMES[n] : n,
  );
}

export function builtInRoleActions(names: readonly string[]): Action[] {
  return BUILT_IN_ROLES.filter((r) => names.includes(r.name)).flatMap((r) => r.actions);
}

/** Object types whose read, edit and manage actions line up level by level. */
export type ContentType = 'Folder' | 'Workbook' | 'Report';

const CONTENT_LEVELS: Record<ContentType, readonly [Action, Action, Action]> = {
  Folder: [Action.FolderRead, Action.FolderEdit, Action.FolderManage],
  Workbook: [Action.WorkbookRead, Action.WorkbookEdit, Action.WorkbookManage],
  Report: [Action.ReportRead, Action.ReportEdit, Action.ReportManage],
};

/** The read, edit and manage actions of a content type. */
export function contentActions(type: ContentType): readonly [Action, Action, Action] {
  return CONTENT_LEVELS[type];
}

/**
 * What a grant of `held` (expanded) on a container of type `from` gives the content of type
 * `to` inside it: the actions themselves (a `ReportRead` grant on a folder covers the reports in
 * it) plus the same level of the content's own type (`FolderEdit` on a folder is `ReportEdit`
 * on its reports).
 */
export function inheritedActions(from: string, to: string, held: ReadonlySet<Action>): Set<Action> {
  const out = new Set(held);
  const source = CONTENT_LEVELS[from as ContentType];
  const target = CONTENT_LEVELS[to as ContentType];
  if (source && target && from !== to) {
    source.forEach((a, level) => {
      if (held.has(a)) for (const b of expandActions([target[level]])) out.add(b);
    });
  }
  return out;
}

/** Every action that, granted on a `from` container, gives `action` on `to` content inside it. */
export function actionsGrantingThrough(from: string, to: string, action: Action): Action[] {
  return ALL_ACTIONS.filter((a) => inheritedActions(from, to, expandActions([a])).has(action));
}

const CONTENT_ACTIONS: ReadonlySet<Action> = new Set(Object.values(CONTENT_LEVELS).flat());

/** Whether `action` is a Folder, Workbook or Report action. */
export function isContentAction(action: Action): boolean {
  return CONTENT_ACTIONS.has(action);
}
