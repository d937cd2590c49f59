import { bodyExamples } from '../../core/openapi/api-body-examples.js';
import { CreateFolderDto, UpdateFolderDto } from './dto/folder.dto.js';
import { CreateWorkbookDto, UpdateWorkbookDto, UpsertWorkbookDto } from './dto/workbook.dto.js';

export const CREATE_FOLDER_EXAMPLES = bodyExamples(CreateFolderDto, {
  root: { summary: 'At the root of the workspace', value: { name: 'Sales' } },
  nested: {
    summary: 'Inside a folder, first among its siblings',
    value: { name: 'EMEA', parentId: 7, position: 0 },
  },
});

export const UPDATE_FOLDER_EXAMPLES = bodyExamples(UpdateFolderDto, {
  rename: { summary: 'Rename', value: { name: 'Sales and marketing' } },
  reorder: { summary: 'Move among its siblings', value: { position: 2 } },
});

export const CREATE_WORKBOOK_EXAMPLES = bodyExamples(CreateWorkbookDto, {
  root: { summary: 'At the root of the workspace', value: { name: 'Q3 pipeline' } },
  inFolder: {
    summary: 'In a folder, with metadata',
    value: { name: 'Q3 pipeline', folderId: 7, meta: { team: 'sales-ops' } },
  },
});

export const UPSERT_WORKBOOK_EXAMPLES = bodyExamples(UpsertWorkbookDto, {
  upsert: {
    summary: 'Create or update the workbook with this slug',
    value: { name: 'Sales overview', meta: { team: 'sales-ops' } },
  },
});

export const UPDATE_WORKBOOK_EXAMPLES = bodyExamples(UpdateWorkbookDto, {
  rename: { summary: 'Rename', value: { name: 'Q3 pipeline (final)' } },
  move: { summary: 'Move to the workspace root', value: { folderId: null } },
  slug: {
    summary: 'Give it a slug, taking it from another workbook',
    value: { slug: 'sales-overview', slugTakeover: true },
  },
});
