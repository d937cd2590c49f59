/**
 * Where deployments run (the runtime, on Kubernetes) and their usage.
 *
 * One Jest file for several parts (`*.e2e-part.ts`): each part keeps its own `describe`, app and
 * database, and the modules they load are loaded once (docs/architecture.md, Tests).
 */
import './runtime.e2e-part.js';
import './runtime-kubernetes.e2e-part.js';
import './runtime-reconcile.e2e-part.js';
import './usage-analytics.e2e-part.js';
