/**
 * SCIM provisioning: providers, users, groups and the protocol.
 *
 * One Jest file for several parts (`*.e2e-part.ts`): each part keeps its own `describe`, app and
 * database, and the modules they load are loaded once (docs/architecture.md, Tests).
 */
import './scim-providers.e2e-part.js';
import './scim-users.e2e-part.js';
import './scim-groups.e2e-part.js';
import './scim-protocol.e2e-part.js';
