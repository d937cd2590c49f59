/**
 * Scheduled notifications, their deliveries, bounds and operations, dashboard exports, and Python
 * report runs.
 *
 * One Jest file for several parts (`*.e2e-part.ts`): each part keeps its own `describe`, app and
 * database, and the modules they load are loaded once (docs/architecture.md, Tests).
 */
import './notifications.e2e-part.js';
import './notification-operations.e2e-part.js';
import './dashboard-exports.e2e-part.js';
import './python-run.e2e-part.js';
