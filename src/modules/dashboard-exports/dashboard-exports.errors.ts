import { errorsOf } from '../../core/errors/api-error.js';

/** This module's codes. A missing (or expired, or someone else's) export is `notFound('DashboardExport', id)`. */
export const dashboardExportsError = errorsOf(
  'dashboard_export_not_ready',
  'dashboard_export_failed',
  'dashboard_export_limit_reached',
  'data_downloads_restricted',
  'export_subject_not_shared',
);
