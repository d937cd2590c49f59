/**
 * Integrations: OAuth and OIDC, GitHub, and dbt syncs (their HTTP contract and outbound bounds).
 *
 * One Jest file for several parts (`*.e2e-part.ts`): each part keeps its own `describe`, app and
 * database, and the modules they load are loaded once (docs/architecture.md, Tests).
 */
import './integrations.e2e-part.js';
import './oauth-flow.e2e-part.js';
import './github.e2e-part.js';
import './dbt-sync-outbound.e2e-part.js';
import './dbt-sync.e2e-part.js';
