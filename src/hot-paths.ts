/**
 * The framework-free pieces of the report hot paths: the token lookup, the report read, the
 * placement writes, the view buffer, cursors and the response mapper. This is the one public
 * entry for the bench baseline (`bench/baseline.mjs`), which runs the service's own SQL and
 * mapping on bare `node:http` + `pg` to measure what the framework costs; it imports this file
 * only, never a module's internal files. Nothing reachable from here may load NestJS, TypeORM or
 * class-validator (test/unit/hot-paths.spec.ts).
 */
export { Action, builtInRoleActions, expandActions } from './core/auth/action.js';
export { hashToken, TOKEN_PATTERN } from './core/auth/token.js';
export { toPrincipal } from './core/auth/token-principal.js';
export { compileNamed } from './core/database/named-params.js';
export { statementName } from './core/database/statement-name.js';
export { encodeCursor, parseCursor } from './core/http/cursor.js';
export { findPlacement, readTarget } from './modules/reports/placement-match.js';
export {
  DELETE_PLACEMENT_SQL,
  INSERT_PLACEMENT_SQL,
  LOCK_REPORT_SQL,
  PLACEMENTS_SQL,
  UPDATE_PLACEMENT_SQL,
} from './modules/reports/placement.sql.js';
export { connectMatch, connectSpot, connectValues } from './modules/reports/placement-writes.js';
export { toReport } from './modules/reports/report.mapper.js';
export { READ_REPORT_SQL, REPORT_COUNT_SQL, reportSelectSql } from './modules/reports/report.sql.js';
export { ViewBuffer } from './modules/reports/view-buffer.js';
export { TOKEN_SQL, TOUCH_KEY_SQL } from './modules/users/token.sql.js';
