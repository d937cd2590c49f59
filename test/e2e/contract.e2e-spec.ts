/**
 * The HTTP contract every route keeps: errors, CORS, the OpenAPI document and its examples, hostile input.
 *
 * One Jest file for several parts (`*.e2e-part.ts`): each part keeps its own `describe`, app and
 * database, and the modules they load are loaded once (docs/architecture.md, Tests).
 */
import './http-contract.e2e-part.js';
import './cors.e2e-part.js';
import './openapi.e2e-part.js';
import './openapi-examples.e2e-part.js';
import './hostile-input.e2e-part.js';
import './idempotency.e2e-part.js';
import './conditional-requests.e2e-part.js';
