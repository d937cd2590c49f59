import { errorsOf } from '../../core/errors/api-error.js';

/** Codes of the folders and workspace endpoints. */
export const workspaceError = errorsOf('folder_not_empty', 'folder_too_deep', 'folder_into_descendant');
