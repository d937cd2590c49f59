/**
 * The data model over HTTP: its routes' contract, refs, builds, remotes and upload bounds (its rules are
 * tested in the service tier, test/service/data-model.service.spec.ts).
 *
 * One Jest file for several parts (`*.e2e-part.ts`): each part keeps its own `describe`, app and
 * database, and the modules they load are loaded once (docs/architecture.md, Tests).
 */
import './model-refs.e2e-part.js';
import './data-model.e2e-part.js';
import './data-model-remote.e2e-part.js';
import './model-upload-bounds.e2e-part.js';
import './git-http.e2e-part.js';
