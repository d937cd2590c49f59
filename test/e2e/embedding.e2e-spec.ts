/**
 * Embedding: groups, embed sessions, provisioning and comments on embedded dashboards.
 *
 * One Jest file for several parts (`*.e2e-part.ts`): each part keeps its own `describe`, app and
 * database, and the modules they load are loaded once (docs/architecture.md, Tests).
 */
import './groups.e2e-part.js';
import './embed-groups.e2e-part.js';
import './embed-sessions.e2e-part.js';
import './embed-provisioning.e2e-part.js';
import './embed-comments.e2e-part.js';
import './embed-catalogue.e2e-part.js';
