import { errorsOf } from '../../core/errors/api-error.js';

export const reportsError = errorsOf(
  'public_id_reserved',
  'public_id_immutable',
  'public_id_mismatch',
  'public_id_taken',
  'public_id_in_other_deployment',
  'upsert_branch_changed',
  'version_conflict',
  'cursor_unavailable_for_sort',
  'invalid_location',
  'location_mismatch',
  'blank_name',
);
