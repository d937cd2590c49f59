/**
 * SQL fragments over this module's tables for other modules' queries that must read these rows in
 * the same round trip (lists, hot paths). The text naming these tables stays here, with their
 * owner (checked by test/unit/module-boundaries.spec.ts). Each fragment is a function of the
 * caller's aliases and `:name` parameters, documented with what it returns.
 */
import { SYNTHETIC_EMAIL_DOMAIN } from './embed-identity.js';

/**
 * The embed users of the tenant `tenantId` whom the published dashboard of the workbook
 * `workbookId` is shared with (it is shared with every embed user, or with that tenant), as a
 * FROM item aliased `alias` with the columns `id`, `username` (the external id), `email` (NULL
 * while the user has only a placeholder address) and `first_name` (the display name). Both
 * arguments are the caller's SQL expressions (`:tenantId`). Comments on embedded dashboards
 * mention these users and nobody else.
 */
export const dashboardAudienceSql = (alias: string, at: { tenantId: string; workbookId: string }): string =>
  `(SELECT u.id, u.external_id AS username,
      CASE WHEN u.email LIKE '%@${SYNTHETIC_EMAIL_DOMAIN}' THEN NULL ELSE u.email END AS email,
      u.display_name AS first_name
    FROM embed_users u
    WHERE u.tenant_id = ${at.tenantId}
      AND EXISTS (SELECT 1 FROM workbook_embed_access ea WHERE ea.workbook_id = ${at.workbookId}
                  AND (ea.tenant_id IS NULL OR ea.tenant_id = ${at.tenantId}))) ${alias}`;
