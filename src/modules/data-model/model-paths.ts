import { dataModelError } from './data-model.errors.js';

const MAX_PATH = 1024;
const MAX_SEGMENT = 255;

/**
 * A file path as the API takes it (`/model/cubes/orders.yml` or `model/cubes/orders.yml`),
 * checked and made relative: no `..` or `.` segments, no empty segments, nothing under `.git`,
 * no control characters or backslashes (a Windows separator would name another file on another
 * system). Anything else is 400 `invalid_path`, before anything is written.
 */
export function normalisePath(raw: unknown, field = 'path'): string {
  if (typeof raw !== 'string') throw dataModelError('invalid_path', `${field} must be a string`);
  const stripped = raw.startsWith('/') ? raw.slice(1) : raw;
  const reason = pathProblem(stripped);
  if (reason) throw dataModelError('invalid_path', `${field} ${JSON.stringify(raw)} ${reason}`);
  return stripped;
}

function pathProblem(p: string): string | null {
  if (p === '') return 'is empty';
  if (p.length > MAX_PATH) return `is longer than ${MAX_PATH} characters`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(p)) return 'holds a control character';
  if (p.includes('\\')) return 'holds a backslash; use / between directories';
  for (const segment of p.split('/')) {
    if (segment === '') return 'has an empty segment';
    if (segment === '.' || segment === '..') return 'may not contain . or .. segments';
    if (segment.toLowerCase() === '.git') return 'may not reach into .git';
    if (segment.length > MAX_SEGMENT) return `has a segment longer than ${MAX_SEGMENT} characters`;
  }
  return null;
}

/**
 * The project root (`deployProjectRoot`, `/` or `/analytics`) as a repository-relative prefix:
 * `''` or `analytics/`.
 */
export function rootPrefix(projectRoot: string): string {
  const trimmed = projectRoot.replace(/^\/+|\/+$/g, '');
  return trimmed === '' ? '' : `${trimmed}/`;
}

/** One node of the file tree the API answers. */
export interface FileNode {
  path: string;
  type: 'file' | 'directory';
  content?: string;
  children: FileNode[];
}

/**
 * The nested tree of `files` (project-relative paths), directories first then files, each by
 * name; paths are absolute (`/model/cubes/orders.yml`).
 */
export function fileTree(files: Array<{ path: string; content?: string }>): FileNode[] {
  const root: FileNode = { path: '', type: 'directory', children: [] };
  const dirs = new Map<string, FileNode>([['', root]]);
  const dirOf = (p: string): FileNode => {
    const found = dirs.get(p);
    if (found) return found;
    const slash = p.lastIndexOf('/');
    const parent = dirOf(slash < 0 ? '' : p.slice(0, slash));
    const node: FileNode = { path: `/${p}`, type: 'directory', children: [] };
    parent.children.push(node);
    dirs.set(p, node);
    return node;
  };
  for (const f of files) {
    const slash = f.path.lastIndexOf('/');
    const node: FileNode = { path: `/${f.path}`, type: 'file', children: [] };
    if (f.content !== undefined) node.content = f.content;
    dirOf(slash < 0 ? '' : f.path.slice(0, slash)).children.push(node);
  }
  const sort = (node: FileNode): void => {
    node.children.sort((a, b) =>
      a.type !== b.type ? (a.type === 'directory' ? -1 : 1) : a.path < b.path ? -1 : a.path > b.path ? 1 : 0,
    );
    node.children.forEach(sort);
  };
  sort(root);
  return root.children;
}
