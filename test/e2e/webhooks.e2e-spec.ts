/**
 * Webhooks: endpoints, deliveries, and the events the modules publish.
 *
 * One Jest file for several parts (`*.e2e-part.ts`): each part keeps its own `describe`, app and
 * database, and the modules they load are loaded once (docs/architecture.md, Tests).
 */
import './domain-events.e2e-part.js';
import './webhooks.e2e-part.js';
