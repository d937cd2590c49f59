/**
 * Every error `code` the service answers, declared once with its HTTP status and meaning. Modules
 * throw through slices of this catalogue ({@link errorsOf} in `api-error.ts`), the OpenAPI
 * document shows these statuses and meanings (`@ApiErrors`), and the table in
 * `docs/api-conventions.md` lists exactly these rows (checked by a test).
 *
 * One kind of missing resource has one code on every route: `<kind>_not_found` (`not_found` is
 * left for unknown routes), also when the missing resource is a parent in the path, such as the
 * deployment of `/deployments/{deploymentId}/reports`.
 */
export interface ErrorCodeSpec {
  readonly status: number;
  readonly meaning: string;
}

export const ERROR_CODES = {
  // Shared by every route.
  bad_request: { status: 400, meaning: 'The request could not be processed.' },
  validation_failed: {
    status: 400,
    meaning: 'A body field, query parameter or path id is invalid or unknown; the message names each.',
  },
  malformed_json: { status: 400, meaning: 'The body is not valid JSON.' },
  invalid_characters: {
    status: 400,
    meaning:
      'A NUL character, or text that is not well-formed Unicode (a lone UTF-16 surrogate, invalid UTF-8), in the URL or body.',
  },
  invalid_cursor: { status: 400, meaning: '`after` is not a cursor returned by this list.' },
  pagination_conflict: { status: 400, meaning: '`first`/`after` mixed with `limit`/`offset`.' },
  unauthorized: { status: 401, meaning: 'Missing, malformed, unknown, expired or revoked token.' },
  forbidden: { status: 403, meaning: 'The caller lacks the required action (the message names it).' },
  https_required: { status: 403, meaning: 'The request did not arrive over HTTPS.' },
  not_found: { status: 404, meaning: 'No such route.' },
  method_not_allowed: { status: 405, meaning: 'Method not supported.' },
  conflict: {
    status: 409,
    meaning:
      'Conflicts with the current state: a duplicate unique value, a still-referenced resource, or a concurrent change (retry).',
  },
  payload_too_large: {
    status: 413,
    meaning: 'Body larger than `BODY_LIMIT` (`DBT_MANIFEST_MAX_BYTES` on `POST .../dbt-sync`).',
  },
  unsupported_media_type: { status: 415, meaning: 'Unsupported content type, encoding or charset.' },
  rate_limited: { status: 429, meaning: 'Rate limit spent; see `Retry-After`.' },
  internal_error: { status: 500, meaning: 'Unexpected error; logged with the request id.' },
  queue_unavailable: {
    status: 503,
    meaning: 'The job queue (Redis) is unavailable; nothing was changed; retry shortly.',
  },
  database_unavailable: {
    status: 503,
    meaning:
      'The database is unreachable or did not answer within its time bounds; retry after `Retry-After`.',
  },
  service_unavailable: { status: 503, meaning: 'A dependency is unavailable; retry shortly.' },

  // Idempotent retries (`Idempotency-Key` on POST), any route.
  invalid_idempotency_key: {
    status: 400,
    meaning: '`Idempotency-Key` is not 1 to 255 printable ASCII characters.',
  },
  idempotency_key_in_progress: {
    status: 409,
    meaning:
      'A request with this `Idempotency-Key` is still being processed; retry after `Retry-After` to get its answer.',
  },
  idempotency_key_reused: {
    status: 422,
    meaning:
      'This `Idempotency-Key` was used for another request (another method, path, caller or body); use a new key.',
  },

  // Conditional writes (`If-Match`, `If-None-Match` on PUT, PATCH and DELETE), any route; SCIM too.
  precondition_failed: {
    status: 412,
    meaning:
      'The resource changed: its current `ETag` (SCIM: its version) does not match `If-Match`, or `If-None-Match` matches it; nothing was changed.',
  },
  invalid_precondition: {
    status: 400,
    meaning: '`If-Match` or `If-None-Match` is neither `*` nor a list of quoted entity tags.',
  },
  precondition_unsupported: {
    status: 400,
    meaning:
      '`If-Match` or `If-None-Match` on a write that has no GET of the same path to compare with; send it without them.',
  },
  resource_busy: {
    status: 409,
    meaning:
      'Another conditional write of this resource held it too long; nothing was changed; retry after `Retry-After`.',
  },

  // Missing resources: one code per kind, on every route.
  account_not_found: { status: 404, meaning: 'No such account (command line only).' },
  api_key_not_found: { status: 404, meaning: 'No such active API key of the caller.' },
  dashboard_not_found: { status: 404, meaning: 'No such published dashboard visible to the caller.' },
  dbt_integration_not_found: {
    status: 404,
    meaning: 'The deployment has no dbt integration; `PUT .../dbt-integration` configures one.',
  },
  dbt_sync_not_found: { status: 404, meaning: 'No such dbt sync of the deployment.' },
  deployment_not_found: {
    status: 404,
    meaning: 'No such deployment visible to the caller, including as the parent of a nested path.',
  },
  embed_group_not_found: { status: 404, meaning: 'No such group in the embed tenant.' },
  embed_tenant_not_found: { status: 404, meaning: 'No such embed tenant.' },
  embed_user_not_found: { status: 404, meaning: 'No such embed user.' },
  branch_not_found: { status: 404, meaning: 'No such branch of the deployment’s data model.' },
  environment_not_found: {
    status: 404,
    meaning: 'No such environment of the deployment (or it went with its branch or staging toggle).',
  },
  folder_not_found: { status: 404, meaning: 'No such folder visible to the caller.' },
  github_installation_not_found: {
    status: 404,
    meaning: 'No such installation of the GitHub App, or it is not linked to the caller’s account.',
  },
  github_repository_not_found: {
    status: 404,
    meaning: 'No such repository accessible to the GitHub App installation.',
  },
  group_not_found: { status: 404, meaning: 'No such group in the account.' },
  oauth_integration_not_found: { status: 404, meaning: 'No such OAuth integration.' },
  oauth_token_not_found: { status: 404, meaning: 'The caller holds no token for that OAuth integration.' },
  oidc_token_config_not_found: { status: 404, meaning: 'No such OIDC token config.' },
  notification_not_found: { status: 404, meaning: 'No such scheduled notification of the deployment.' },
  notification_delivery_not_found: { status: 404, meaning: 'No such delivery of the notification.' },
  pod_not_found: {
    status: 404,
    meaning: 'No such pod of the deployment (with no runtime configured: no such job run of the deployment).',
  },
  report_not_found: { status: 404, meaning: 'No such report visible to the caller.' },
  role_not_found: { status: 404, meaning: 'No such custom role.' },
  upload_transaction_not_found: {
    status: 404,
    meaning: 'No such open upload transaction of the caller (finished, expired or never started).',
  },
  user_attribute_not_found: { status: 404, meaning: 'No such user attribute.' },
  user_not_found: { status: 404, meaning: 'No such user in the account.' },
  webhook_not_found: { status: 404, meaning: 'No such webhook endpoint of the account.' },
  webhook_delivery_not_found: { status: 404, meaning: 'No such delivery of the webhook endpoint.' },
  workbook_not_found: { status: 404, meaning: 'No such workbook visible to the caller.' },

  // Audit log.
  audit_log_disabled: { status: 403, meaning: 'The audit log is off for the account.' },
  invalid_time_range: { status: 400, meaning: '`from` is not before `to`.' },

  // Users, roles, groups and API keys.
  email_taken: { status: 409, meaning: 'A user with that email exists.' },
  username_taken: { status: 409, meaning: 'That username is in use.' },
  cannot_act_on_self: { status: 400, meaning: 'An admin tried to delete themselves.' },
  cannot_deactivate_self: {
    status: 403,
    meaning: 'An admin tried to deactivate themselves or remove their own `Admin` role.',
  },
  last_admin: {
    status: 403,
    meaning: 'The change would leave the account without an active admin.',
  },
  unknown_deployment: {
    status: 400,
    meaning: '`settings.defaultDeploymentId` is not a deployment of the account.',
  },
  role_name_taken: { status: 409, meaning: 'A custom role with that name exists.' },
  role_name_reserved: { status: 400, meaning: 'The name is a built-in role’s.' },
  unknown_resource: {
    status: 400,
    meaning: 'A policy names a resource that does not exist, or gives resources to a `Global` policy.',
  },
  unsupported_resource_type: { status: 400, meaning: 'A policy’s `resourceType` cannot carry grants.' },
  group_name_taken: { status: 409, meaning: 'A group with that name exists.' },
  unknown_groups: {
    status: 400,
    meaning: 'Embed provisioning named groups that do not exist (all are listed).',
  },

  // Deployments.
  unknown_region: { status: 400, meaning: 'The region is not in `GET /api/v1/regions`.' },
  release_version_invalid: {
    status: 400,
    meaning: '`releaseChannelVersion` is not offered on the release channel.',
  },
  creation_step_invalid: {
    status: 400,
    meaning: 'The setup wizard cannot advance from its current step to that one (see docs/deployments.md).',
  },
  invalid_env_var_name: {
    status: 400,
    meaning:
      'A new environment variable name does not match `^[A-Za-z_][A-Za-z0-9_]*$` (the message names it; only stored names may be resent as they are).',
  },
  duplicate_env_var_name: {
    status: 400,
    meaning: 'The same environment variable name is sent more than once in one request.',
  },
  env_var_placeholder: {
    status: 400,
    meaning:
      'An environment variable value is the `[ENCRYPTED]` placeholder of a masked read; send the real value or leave the variable out.',
  },
  too_many_env_vars: {
    status: 400,
    meaning: 'The deployment would hold more than 500 environment variables.',
  },

  // Deployment runtime (pods and logs).
  runtime_unavailable: {
    status: 503,
    meaning:
      'The deployment runtime (the Kubernetes API) could not be reached, was overloaded, or did not answer within `DEPLOYMENT_RUNTIME_TIMEOUT_MS`; retry shortly.',
  },
  runtime_failed: {
    status: 502,
    meaning:
      'The deployment runtime refused this service’s credentials or permissions (401, 403) or failed; the message gives its status.',
  },

  // A deployment's Core Data API (its data, queried by this service).
  token_limit_reached: {
    status: 429,
    meaning:
      'The environment holds `ENVIRONMENT_TOKENS_MAX` data API tokens that have not expired; nothing was issued; `Retry-After` says when the first of them expires.',
  },
  data_api_not_configured: {
    status: 409,
    meaning:
      'No data API is configured for the deployment: the installation sets neither `DATA_API_URL_TEMPLATE` nor `DEPLOYMENT_DOMAIN`, or the deployment has no `CUBEJS_API_SECRET` environment variable to sign data API tokens with (`PUT .../env-vars`); the message names the setting. Nothing was sent.',
  },
  data_api_unavailable: {
    status: 503,
    meaning:
      'The deployment’s configured data API could not be reached (the message gives the cause, such as `ECONNREFUSED` or a host name that does not resolve, and the setting its address comes from), was overloaded, or did not answer within `DATA_API_TIMEOUT_MS`.',
  },
  data_api_timeout: {
    status: 504,
    meaning:
      'The deployment’s data API was still computing (`Continue wait`) after `DATA_API_WAIT_MS`; retry later.',
  },
  data_api_failed: {
    status: 502,
    meaning:
      'The deployment’s data API failed, refused this service’s token, or answered something unreadable or larger than `DATA_API_MAX_BYTES`; the message gives its status.',
  },
  data_api_query_invalid: {
    status: 400,
    meaning: 'The deployment’s data API refused the query; the message carries its reason.',
  },

  // Data model (git).
  invalid_branch_name: {
    status: 400,
    meaning:
      'A branch name is not a short branch name: empty, a full ref (`refs/...`), `@{`, `HEAD` or `@`, a dev-branch name not made by dev mode, unprintable characters, or refused by `git check-ref-format --branch`.',
  },
  branch_exists: { status: 409, meaning: 'A branch with that name exists.' },
  deploy_branch_protected: {
    status: 400,
    meaning: 'The deploy branch cannot be deleted, written directly, made a staging environment or reviewed.',
  },
  branch_not_writable: {
    status: 400,
    meaning:
      'The branch cannot be changed this way: files are written only on the caller’s personal dev-mode branch, and personal dev branches are never pulled, uploaded to or merged into by others.',
  },
  not_in_dev_mode: { status: 400, meaning: 'The caller has no active dev-mode branch.' },
  staging_not_allowed: {
    status: 400,
    meaning:
      'Only shared branches (not personal dev branches or the deploy branch) have staging environments.',
  },
  invalid_path: {
    status: 400,
    meaning: 'A file path is empty, escapes the project (`..`, `.git`), or holds forbidden characters.',
  },
  file_not_found: { status: 400, meaning: 'A file to delete or rename does not exist on the branch.' },
  file_exists: {
    status: 400,
    meaning: 'A rename target exists already, or a file would be where a directory is (or the reverse).',
  },
  file_too_large: { status: 400, meaning: 'A file is larger than `MODEL_MAX_FILE_BYTES`.' },
  too_many_files: { status: 400, meaning: 'The branch would hold more than `MODEL_MAX_FILES` files.' },
  nothing_to_merge: { status: 400, meaning: 'The branch has no parent branch to merge into.' },
  merge_conflict: {
    status: 409,
    meaning: 'The merge conflicts; the message lists the conflicting files; nothing changed.',
  },
  merge_not_allowed: {
    status: 403,
    meaning: 'Merging into the deploy branch is turned off for the deployment (`deployBranchMergeAllowed`).',
  },
  merge_gate_unmet: {
    status: 409,
    meaning:
      'The merge gate of the deploy branch is not met; the message names what is missing (approvals, a request for changes, content the change would break); nothing changed.',
  },
  merge_gate_override_forbidden: {
    status: 403,
    meaning: '`overrideMergeGate` was sent by a caller who is not a tenant admin.',
  },
  cannot_review_own_change: {
    status: 409,
    meaning:
      'The reviewer authored a commit of the change (the branch’s commits the deploy branch does not have).',
  },
  upload_hash_mismatch: {
    status: 400,
    meaning: 'An upload `finish` lists a hash whose content was neither uploaded nor already on the branch.',
  },
  upload_limit_reached: {
    status: 429,
    meaning:
      'The account’s uploads hold `MODEL_UPLOAD_MAX_PENDING_BYTES` already (parts not yet committed by `finish` nor pruned after expiry); nothing was stored; see `Retry-After`.',
  },
  remote_not_connected: { status: 400, meaning: 'The deployment has no connected git repository.' },
  remote_failed: {
    status: 502,
    meaning: 'The connected git repository refused or failed a fetch or push; the message says why.',
  },
  github_not_configured: {
    status: 409,
    meaning:
      'No GitHub App is configured on this installation (`GITHUB_APP_ID`, `GITHUB_APP_PRIVATE_KEY`, `GITHUB_APP_SLUG`), its key cannot be read, or `SECRETS_KEY` is unset in production; the message names the setting.',
  },
  github_unavailable: {
    status: 502,
    meaning: 'GitHub’s API failed or could not be reached; retry shortly.',
  },
  invalid_github_state: {
    status: 400,
    meaning:
      'A GitHub App setup redirect whose `state` is missing, altered, not issued by this service, or expired.',
  },
  github_link_unverified: {
    status: 400,
    meaning:
      'GitHub reports no install or change of the installation since the `state` was issued, so the redirect does not prove who made it.',
  },
  compiler_unavailable: {
    status: 503,
    meaning: 'The model compiler could not be started; retry shortly.',
  },
  compile_limit_reached: {
    status: 429,
    meaning:
      'The account’s compiles (or the process’s) are at their share, and no slot freed within `MODEL_COMPILE_QUEUE_MS`; see `Retry-After`.',
  },
  repository_of_another_installation: {
    status: 500,
    meaning:
      'The deployment’s repository under `REPOS_DIR` was made by another installation (another database); nothing was read or changed. The operator must check `REPOS_DIR`.',
  },

  // Git over HTTP (`.../git`): clones and fetches of a deployment’s data model.
  git_push_not_supported: {
    status: 403,
    meaning:
      'The deployment’s git repository is served over HTTP for clones and fetches only: change the model through dev mode (`POST .../dev-mode`, file writes, commit, merge) or the command-line upload.',
  },
  git_fetch_limit_reached: {
    status: 429,
    meaning:
      'The account has `GIT_HTTP_ACCOUNT_CONCURRENCY` git requests (clones, fetches, `ls-remote`) under way in this process, its share, and none ended within `GIT_HTTP_QUEUE_MS`; see `Retry-After`.',
  },
  git_fetch_busy: {
    status: 503,
    meaning:
      'This process serves `GIT_HTTP_CONCURRENCY` git requests already, and none ended within `GIT_HTTP_QUEUE_MS`; see `Retry-After`.',
  },
  git_fetch_timeout: {
    status: 503,
    meaning:
      'The git request did not end within `GIT_HTTP_TIMEOUT_MS` (its body never ended, or the pack took too long) and its git process was killed; once the pack has started, the connection is cut instead.',
  },

  // dbt sync.
  invalid_dbt_repository_url: {
    status: 400,
    meaning:
      'A dbt repository URL that is not an absolute URL, has no host, holds credentials, uses a git transport outside `DBT_GIT_PROTOCOLS`, names a host outside `DBT_GIT_HOSTS`, or names a host the outbound rule refuses (one that is, or resolves to, a loopback, private, link-local or other reserved address, or a metadata name, unless `OUTBOUND_ALLOWED_HOSTS` opens it).',
  },
  invalid_dbt_ref: {
    status: 400,
    meaning:
      '`ref` is empty, looks like a commit SHA (a branch or tag is needed), or is not a valid git ref name.',
  },
  dbt_integration_not_configured: {
    status: 400,
    meaning:
      'A sync from git needs the deployment’s dbt integration (`PUT .../dbt-integration`); or post the manifest (`source: manifest`).',
  },
  invalid_manifest: {
    status: 400,
    meaning:
      'The posted manifest is missing (`source: manifest`) or is not a dbt manifest (schema v10 to v12) of the expected shape; the message says where.',
  },
  dbt_sync_finished: {
    status: 409,
    meaning: 'The sync has finished (completed, failed or cancelled): there is nothing left to cancel.',
  },
  dbt_sync_not_completed: {
    status: 409,
    meaning: 'The sync has not completed (it is still running, or it failed or was cancelled): no result.',
  },
  dbt_sync_files_on_branch: {
    status: 409,
    meaning: 'The sync committed its files to its branch (`output: branch`): read them from the branch.',
  },

  // Scheduled notifications.
  unsupported_recipient_type: {
    status: 400,
    meaning:
      'A notification recipient of type `SLACK`: only `USER` and `EMBED_USER` recipients are supported.',
  },
  invalid_notification_recipient: {
    status: 400,
    meaning:
      'A notification recipient does not resolve (no such user of the account, missing fields of its type, or no valid email); nothing was written.',
  },
  notification_recipient_limit_reached: {
    status: 400,
    meaning:
      'The notification would have more recipients than `NOTIFICATION_MAX_RECIPIENTS` (console and embed users together); nothing was written.',
  },
  notification_run_in_progress: {
    status: 409,
    meaning:
      'A run of the notification asked for by hand (run now) is still queued or running; retry once it has ended. Nothing was started.',
  },
  delivery_not_failed: {
    status: 409,
    meaning:
      'Only a `failed` delivery can be resent; this one is not (it was sent, or is queued or being sent). Nothing was changed.',
  },
  delivery_not_resendable: {
    status: 409,
    meaning:
      'The delivery failed before anything was made to send it (every report failed, the rendering failed, or mail was not configured): run the notification again (`POST .../run`) instead. Nothing was changed.',
  },
  notification_delivery_limit_reached: {
    status: 409,
    meaning:
      'The account has sent `NOTIFICATION_MAX_DELIVERIES_PER_HOUR` notification emails this hour (UTC); resend after the hour. Nothing was changed.',
  },

  // Webhooks.
  invalid_webhook_url: {
    status: 400,
    meaning:
      'The endpoint `url` is not an absolute `http` or `https` URL without credentials, or names a host this service does not connect to (loopback, private, link-local or other reserved addresses, metadata names, names that do not resolve publicly) unless `OUTBOUND_ALLOWED_HOSTS` opens it; nothing was written.',
  },
  webhook_limit_reached: {
    status: 409,
    meaning:
      'The account has `WEBHOOK_MAX_ENDPOINTS` webhook endpoints already; delete one first. Nothing was written.',
  },
  webhook_disabled: {
    status: 409,
    meaning:
      'The webhook endpoint is disabled: enable it (`PATCH` with `enabled: true`) before redelivering.',
  },

  // Workspace: folders, workbooks, dashboards.
  folder_not_empty: { status: 400, meaning: 'The folder still has sub-folders.' },
  folder_too_deep: { status: 400, meaning: 'Folders would nest deeper than allowed.' },
  folder_into_descendant: { status: 400, meaning: 'A folder cannot move into itself or its descendants.' },
  slug_taken: { status: 409, meaning: 'Another workbook of the deployment has that slug.' },
  upsert_branch_changed: {
    status: 409,
    meaning: 'An upsert by slug or public id found the resource on another branch.',
  },
  workbook_id_mismatch: { status: 400, meaning: '`workbookId` in the body is not the workbook of the path.' },
  nothing_to_publish: {
    status: 400,
    meaning: 'The workbook has no draft to publish and no config was sent.',
  },
  shared_workspace_unavailable: {
    status: 403,
    meaning: 'The shared workspace is not available to the caller.',
  },

  // Reports and placements.
  public_id_reserved: { status: 400, meaning: 'The `publicId` has a reserved form.' },
  public_id_immutable: { status: 400, meaning: 'A report keeps the `publicId` it was given.' },
  public_id_mismatch: { status: 400, meaning: 'The body `publicId` differs from the one in the path.' },
  public_id_taken: { status: 409, meaning: 'Another report of the deployment has that `publicId`.' },
  public_id_in_other_deployment: {
    status: 409,
    meaning: 'The `publicId` belongs to a report of another deployment.',
  },
  version_conflict: { status: 409, meaning: 'The report changed since the `version` the client sent.' },
  cursor_unavailable_for_sort: {
    status: 400,
    meaning: 'Cursor paging is not offered for the requested sort.',
  },
  invalid_location: { status: 400, meaning: 'A placement location is not valid A1 notation.' },
  location_mismatch: {
    status: 400,
    meaning: '`resultLocation` disagrees with `sheetName` or `anchorCell`.',
  },
  blank_name: { status: 400, meaning: 'A name is blank.' },

  // Embedding.
  invalid_embed_tenant_name: {
    status: 400,
    meaning: 'An embed tenant name is not in its canonical lowercase form.',
  },
  invalid_external_id: { status: 400, meaning: '`externalId` is blank or too long.' },
  embed_group_name_taken: { status: 400, meaning: 'An embed group with that name exists in the tenant.' },
  embed_group_name_reserved: { status: 400, meaning: 'The embed group name is reserved.' },
  embed_group_has_members: { status: 400, meaning: 'The embed group still has members.' },
  unknown_tenant_groups: {
    status: 400,
    meaning: '`tenantGroups` named groups that do not exist (all are listed).',
  },
  invalid_member: { status: 400, meaning: 'A member to add or remove is not a user of the tenant.' },
  embed_user_limit_reached: {
    status: 429,
    meaning: 'The account has `EMBED_USERS_MAX` embed users already.',
  },
  tenant_groups_need_creator_mode: {
    status: 400,
    meaning: '`tenantGroups` are only accepted in creator mode.',
  },
  invalid_embed_session: {
    status: 401,
    meaning: 'The embed session id is unknown, used, expired or revoked.',
  },
  embedding_not_allowed: { status: 403, meaning: 'The dashboard is not allowed to be embedded.' },
  no_embed_access_change: { status: 400, meaning: 'An embed access update changes nothing.' },
  ambiguous_embed_access_target: {
    status: 400,
    meaning: 'An embed access update names more or less than one target.',
  },
  no_published_dashboard: { status: 400, meaning: 'The workbook has no published dashboard.' },

  // Python report runs (POST /embed/dashboard/{publicId}/python-run).
  python_analysis_disabled: {
    status: 403,
    meaning: 'Python analysis is off for the account (tenant setting `pythonAnalysisEnabled`).',
  },
  report_version_mismatch: {
    status: 403,
    meaning:
      '`reportVersionId` is not one of the dashboard’s published report snapshots, or not a snapshot of `reportId`.',
  },
  report_has_no_python: { status: 400, meaning: 'The report snapshot has no `pythonCode` to run.' },
  python_input_too_large: {
    status: 400,
    meaning: 'The rows the query returned and the code take more than 16 MiB as JSON; narrow the query.',
  },
  python_sandbox_unavailable: {
    status: 503,
    meaning:
      'Python cannot run here: the sandbox (bubblewrap) cannot be set up on this host, or its processes fail to start; the log says why. Code never runs unsandboxed.',
  },
  python_run_limit_reached: {
    status: 429,
    meaning:
      'The account has `PYTHON_ACCOUNT_CONCURRENCY` Python runs under way already, its share; see `Retry-After`.',
  },
  python_sandbox_busy: {
    status: 503,
    meaning:
      'Too many Python runs at once in this process, or no Python process became ready in time; retry shortly.',
  },

  // Comments on embedded dashboards (/embed/dashboard/{publicId}/comments).
  comment_not_found: {
    status: 404,
    meaning: 'No such comment on this dashboard in the caller’s embed tenant, or it was deleted.',
  },
  not_comment_author: {
    status: 403,
    meaning:
      'Only a comment’s author may edit or delete it, and only a thread’s author may resolve or re-open it.',
  },
  comment_is_reply: {
    status: 400,
    meaning:
      'The comment is a reply: replies take no replies of their own and have no resolved state (name the thread’s first comment).',
  },
  unknown_mentions: {
    status: 400,
    meaning:
      'A mention names embed users who are not of the caller’s tenant or whom the dashboard is not shared with (all are listed); nothing was written.',
  },
  too_many_mentions: {
    status: 400,
    meaning: 'A comment mentions more than 20 different embed users; nothing was written.',
  },
  comment_limit_reached: {
    status: 429,
    meaning:
      'The thread has 500 replies, or the dashboard 10000 comments in the caller’s embed tenant; nothing was written.',
  },
  comment_write_limit_reached: {
    status: 429,
    meaning:
      'The embed user made `EMBED_COMMENT_WRITES_PER_MINUTE` comment writes this minute; nothing was written; see `Retry-After`.',
  },

  // Dashboard exports (/deployments/{id}/dashboard-exports).
  dashboard_export_not_found: {
    status: 404,
    meaning:
      'No such dashboard export of the caller in this deployment: it never existed, it expired (`DASHBOARD_EXPORT_TTL_SECONDS` after it was started), or another user started it.',
  },
  dashboard_export_not_ready: {
    status: 409,
    meaning:
      'The export is still rendering (`pending` or `processing`): poll its status until it is `completed`.',
  },
  dashboard_export_failed: {
    status: 422,
    meaning: 'The export failed (its status says why); that is final: start a new export.',
  },
  dashboard_export_limit_reached: {
    status: 429,
    meaning:
      'The account has `DASHBOARD_EXPORT_MAX_IN_FLIGHT` dashboard exports pending or processing already; nothing was started; see `Retry-After`.',
  },
  data_downloads_restricted: {
    status: 403,
    meaning:
      'The account restricts data downloads (app config `restrictDataDownload`): dashboards are not exported.',
  },
  export_subject_not_shared: {
    status: 403,
    meaning: '`renderAs` names an embed user of an embed tenant the dashboard’s workbook is not shared with.',
  },

  // Settings and user attributes.
  user_attribute_name_taken: { status: 409, meaning: 'A user attribute with that name exists.' },
  attribute_type_immutable: { status: 400, meaning: 'A user attribute’s type cannot change.' },
  invalid_default_value: { status: 400, meaning: '`defaultValue` does not parse as the attribute’s type.' },
  invalid_attribute_value: { status: 400, meaning: 'A value does not fit the attribute’s type.' },

  // Usage analytics.
  usage_analytics_disabled: {
    status: 404,
    meaning: 'Usage analytics is not configured on this installation.',
  },

  // Integrations.
  oauth_integration_name_taken: { status: 409, meaning: 'An OAuth integration with that name exists.' },
  config_too_large: { status: 400, meaning: '`config` is larger than 16 KB.' },
  invalid_oauth_state: { status: 400, meaning: 'An OAuth callback with an unknown, used or expired state.' },
  oauth_authorization_denied: { status: 400, meaning: 'The provider redirected with an error.' },
  oauth_token_exchange_failed: {
    status: 502,
    meaning: 'The provider’s token endpoint did not issue tokens.',
  },
  oidc_token_config_name_taken: { status: 409, meaning: 'An OIDC token config with that name exists.' },
  oidc_audience_type_taken: {
    status: 409,
    meaning: 'An OIDC token config for that audience type exists.',
  },
  name_required: { status: 400, meaning: '`name` is required for a custom audience.' },
  custom_audience_required: { status: 400, meaning: '`customAudience` is required for the audience type.' },
  custom_audience_not_allowed: { status: 400, meaning: '`customAudience` is only for custom audiences.' },
  invalid_custom_audience: { status: 400, meaning: '`customAudience` is blank or contains spaces.' },
  target_env_var_not_allowed: { status: 400, meaning: '`targetEnvVar` is only for custom audiences.' },
  invalid_custom_claims: { status: 400, meaning: '`customClaims` break a rule (each is listed).' },

  // SCIM (`/api/scim/v2`): the `scimType` values of RFC 7644 section 3.12, in the SCIM error schema.
  invalidFilter: { status: 400, meaning: 'SCIM: the filter is not valid.' },
  invalidSyntax: { status: 400, meaning: 'SCIM: the request body is not valid.' },
  invalidPath: { status: 400, meaning: 'SCIM: a PATCH path is not valid.' },
  invalidValue: { status: 400, meaning: 'SCIM: a value is missing or not valid.' },
  noTarget: { status: 400, meaning: 'SCIM: a PATCH path matches nothing.' },
  mutability: { status: 400, meaning: 'SCIM: the change would modify a read-only attribute.' },
  tooMany: { status: 400, meaning: 'SCIM: the query would return too many results.' },
  uniqueness: { status: 409, meaning: 'SCIM: a unique value is taken.' },
  scim_not_found: { status: 404, meaning: 'SCIM: no such resource, schema or resource type.' },
} as const satisfies Record<string, ErrorCodeSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(ERROR_CODES, value);
}
