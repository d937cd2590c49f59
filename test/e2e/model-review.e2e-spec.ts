/**
 * Reviewing a model change before it ships (issue 33, docs/data-model.md "Reviewing a change"):
 * the member diff, the content impact, reviews and the merge gate, with real compiles.
 *
 * One Jest file for several parts (`*.e2e-part.ts`): each part keeps its own `describe`, app and
 * database, and the modules they load are loaded once (docs/architecture.md, Tests).
 */
import './model-diff.e2e-part.js';
import './content-impact.e2e-part.js';
import './merge-gate.e2e-part.js';
