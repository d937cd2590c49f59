/**
 * Workspace content: folders, workbooks, reports, placements and their counts and names.
 *
 * One Jest file for several parts (`*.e2e-part.ts`): each part keeps its own `describe`, app and
 * database, and the modules they load are loaded once (docs/architecture.md, Tests).
 */
import './workspace.e2e-part.js';
import './folders.e2e-part.js';
import './workbooks.e2e-part.js';
import './reports.e2e-part.js';
import './placements.e2e-part.js';
import './report-count.e2e-part.js';
import './vocabulary.e2e-part.js';
import './content-events.e2e-part.js';
