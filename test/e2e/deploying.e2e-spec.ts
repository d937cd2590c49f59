/**
 * Deployments, their environments, versions, environment variables and data API tokens.
 *
 * One Jest file for several parts (`*.e2e-part.ts`): each part keeps its own `describe`, app and
 * database, and the modules they load are loaded once (docs/architecture.md, Tests).
 */
import './deployments.e2e-part.js';
import './environments.e2e-part.js';
import './deployment-versions.e2e-part.js';
import './env-vars.e2e-part.js';
import './data-api-tokens.e2e-part.js';
