/**
 * The tags of the OpenAPI document, in the order of the product: what a reader sets up first comes
 * first. Controllers name one of these in `@ApiTags`; every operation carries exactly one tag (a
 * test checks both). Names follow the reference platform's where it has the same resource.
 */
export const API_TAGS = [
  {
    name: 'Deployments',
    description: 'The deployments of the account: list, read, change settings, delete.',
  },
  {
    name: 'Deployment Creation',
    description:
      'Create a deployment: with the starter project and its first build queued at once, or (as the reference command-line tool asks) without a scaffold.',
  },
  { name: 'Regions', description: 'The regions a deployment can run in.' },
  {
    name: 'Environments',
    description:
      'Where a deployment’s data is served: production, staging branches and development branches, with their API addresses.',
  },
  {
    name: 'Data Model',
    description:
      'A deployment’s data model on git: files, uploads, dev mode, branches, commits, merges, validation, ' +
      'and the connected GitHub repository.',
  },
  {
    name: 'GitHub',
    description:
      'The GitHub App: its installations, and the repositories and branches they reach, for connecting a deployment to a repository.',
  },
  {
    name: 'dbt Sync',
    description:
      'Cubes generated from a dbt project: the deployment’s dbt repository, and sync runs that convert its ' +
      'compiled manifest (or a posted one) into cube files on a new branch, with their status, result and logs.',
  },
  {
    name: 'Workspace',
    description:
      'The content tree of a deployment (folders, workbooks, reports) in one listing; move and delete in bulk.',
  },
  { name: 'Folders', description: 'Folders of the workspace tree.' },
  {
    name: 'Workbooks',
    description: 'Workbooks, their dashboard layout, duplication and publishing of the dashboard.',
  },
  {
    name: 'Reports',
    description:
      'Reports (saved queries) and their placements: connect a report to a workbook, disconnect it, refresh it.',
  },
  {
    name: 'Notifications',
    description:
      'Scheduled notifications: a published dashboard mailed to console and embed users on a schedule, with ' +
      'the reports’ tables and a PDF or PNG of the dashboard; their recipients and deliveries.',
  },
  {
    name: 'Dashboard Exports',
    description:
      'A published dashboard rendered on demand as a PNG or PDF, as the caller or as another user: start, poll, download.',
  },
  {
    name: 'Users',
    description:
      'Console users of the account: the caller, listing, admin create, update, delete and direct grants.',
  },
  { name: 'Roles', description: 'Built-in and custom roles, and their assignment to users and groups.' },
  { name: 'Groups', description: 'Groups of console users, their members and grants.' },
  { name: 'API Keys', description: 'The caller’s personal API tokens (`pat_...`): create, list, revoke.' },
  {
    name: 'User Attributes',
    description: 'Typed attributes defined for the users of the account, with optional defaults.',
  },
  { name: 'User Attribute Values', description: 'The values of user attributes for one user.' },
  { name: 'Tenant Settings', description: 'Account-wide settings, such as the audit log switch.' },
  { name: 'App Theme', description: 'Theme, embedding and client-app settings of the account.' },
  { name: 'OAuth Integrations', description: 'OAuth 2.0 providers that users can connect to.' },
  {
    name: 'User OAuth Tokens',
    description:
      'A user’s connection to an OAuth integration: start the flow, the callback, the stored token.',
  },
  {
    name: 'OIDC Token Configs',
    description:
      'OIDC tokens issued to deployments for cloud identity federation (AWS, Azure, GCP, custom audiences).',
  },
  {
    name: 'Webhooks',
    description:
      'Signed webhooks: endpoints that receive the account’s events (builds, dbt syncs, notifications, content, ' +
      'deployments, SCIM deprovisioning) as signed POSTs, with each endpoint’s delivery log and redelivery.',
  },
  {
    name: 'Embed Tenants',
    description: 'Embed tenants and their users and groups, provisioned by the embedding application.',
  },
  {
    name: 'Dashboard Embed Access',
    description: 'Which embed tenants and groups may see a workbook’s dashboard.',
  },
  {
    name: 'Embed',
    description:
      'Embed sessions (generate, exchange for an embed token, revoke) and the embedded dashboard, read with an embed token.',
  },
  {
    name: 'SCIM',
    description:
      'SCIM 2.0 provisioning of users and groups (RFC 7643, RFC 7644) under `/api/scim/v2`, for identity providers.',
  },
  {
    name: 'Usage Analytics',
    description: 'Short-lived tokens for the usage-analytics data API, scoped to the account.',
  },
  {
    name: 'Audit Log',
    description: 'Every mutating request of the account, successful or refused, while the audit log is on.',
  },
  { name: 'OpenAPI Spec', description: 'This document.' },
  { name: 'Health', description: 'Liveness and readiness probes for orchestrators. No token.' },
] as const satisfies ReadonlyArray<{ name: string; description: string }>;

export type ApiTagName = (typeof API_TAGS)[number]['name'];
