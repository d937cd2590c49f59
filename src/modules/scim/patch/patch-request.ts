import { parsePath, type PatchPath } from '../filter/filter-parser.js';
import { scimError } from '../scim.errors.js';
import { URN } from '../scim.schema.js';

export type PatchOpName = 'add' | 'remove' | 'replace';

export interface PatchOperation {
  op: PatchOpName;
  path: PatchPath | null;
  /** The path as sent, for messages. */
  pathText: string | null;
  /** Absent for a `remove` sent without `value`. */
  value?: unknown;
}

export const MAX_PATCH_OPERATIONS = 1000;

const OPS: ReadonlySet<string> = new Set(['add', 'remove', 'replace']);

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A member of a SCIM message object by its case-insensitive name (attribute names are). */
export function member(obj: Record<string, unknown>, name: string): unknown {
  if (name in obj) return obj[name];
  const lower = name.toLowerCase();
  const key = Object.keys(obj).find((k) => k.toLowerCase() === lower);
  return key === undefined ? undefined : obj[key];
}

/** Whether a message carries `urn` in its `schemas` (400 invalidSyntax when `schemas` is malformed). */
export function hasSchema(body: Record<string, unknown>, urn: string): boolean {
  const schemas = member(body, 'schemas');
  if (schemas === undefined) return false;
  if (!Array.isArray(schemas) || !schemas.every((s) => typeof s === 'string')) {
    throw scimError('invalidSyntax', 'schemas must be an array of schema URNs');
  }
  return schemas.some((s: string) => s.toLowerCase() === urn.toLowerCase());
}

/**
 * Reads a PatchOp message (RFC 7644 section 3.5.2): its `schemas`, and each operation's `op`
 * (case-insensitive: Entra sends `Add`, `Replace`, `Remove`), `path` and `value`.
 */
export function parsePatchRequest(body: unknown): PatchOperation[] {
  if (!isObject(body)) throw scimError('invalidSyntax', 'The request body must be a PatchOp JSON object');
  if (!hasSchema(body, URN.patchOp)) {
    throw scimError('invalidSyntax', `schemas must contain "${URN.patchOp}"`);
  }
  const operations = member(body, 'Operations');
  if (!Array.isArray(operations) || operations.length === 0) {
    throw scimError('invalidSyntax', 'Operations must be an array of one or more operations');
  }
  if (operations.length > MAX_PATCH_OPERATIONS) {
    throw scimError('invalidSyntax', `Operations may hold at most ${MAX_PATCH_OPERATIONS} operations`);
  }
  return operations.map((raw: unknown, i): PatchOperation => {
    const where = `Operations[${i}]`;
    if (!isObject(raw)) throw scimError('invalidSyntax', `${where} must be an object`);
    const opRaw = member(raw, 'op');
    if (typeof opRaw !== 'string' || !OPS.has(opRaw.toLowerCase())) {
      throw scimError('invalidSyntax', `${where}.op must be "add", "remove" or "replace"`);
    }
    const op = opRaw.toLowerCase() as PatchOpName;
    const pathRaw = member(raw, 'path');
    if (pathRaw !== undefined && pathRaw !== null && typeof pathRaw !== 'string') {
      throw scimError('invalidPath', `${where}.path must be a string`);
    }
    const pathText = typeof pathRaw === 'string' && pathRaw.trim() !== '' ? pathRaw.trim() : null;
    const path = pathText === null ? null : parsePath(pathText);
    const hasValue = Object.keys(raw).some((k) => k.toLowerCase() === 'value');
    const value = member(raw, 'value');
    if (op === 'remove' && path === null) {
      throw scimError('noTarget', `${where}: remove needs a path naming what to remove`);
    }
    if (op !== 'remove' && !hasValue) throw scimError('invalidSyntax', `${where}: ${op} needs a value`);
    if (op !== 'remove' && path === null && !isObject(value)) {
      throw scimError('invalidSyntax', `${where}: without a path, value must be an object of attributes`);
    }
    return hasValue ? { op, path, pathText, value } : { op, path, pathText };
  });
}
