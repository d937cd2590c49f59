/**
 * Console users, roles, API keys, sign-in, user attributes, settings and the audit log.
 *
 * One Jest file for several parts (`*.e2e-part.ts`): each part keeps its own `describe`, app and
 * database, and the modules they load are loaded once (docs/architecture.md, Tests).
 */
import './auth.e2e-part.js';
import './api-keys.e2e-part.js';
import './roles.e2e-part.js';
import './users.e2e-part.js';
import './users-bulk.e2e-part.js';
import './user-attributes.e2e-part.js';
import './settings.e2e-part.js';
import './audit-log.e2e-part.js';
import './cli-routes.e2e-part.js';
