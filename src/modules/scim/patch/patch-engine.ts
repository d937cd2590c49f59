import { asBoolean, matchesValue, pinnedValues } from '../filter/filter-eval.js';
import { parsePath, type FilterNode, type PatchPath } from '../filter/filter-parser.js';
import { scimError } from '../scim.errors.js';
import { resolveAttr, subAttr, type AttributeDef, type ResourceSchema } from '../scim.schema.js';
import { isObject, type PatchOpName, type PatchOperation } from './patch-request.js';

/**
 * The PATCH operations of RFC 7644 section 3.5.2 applied to a resource held in memory as a SCIM
 * document (`{userName, name: {...}, emails: [...]}`, canonical attribute names). Attribute names
 * are case-insensitive and may carry the core schema URN; attributes we do not support
 * (extension schemas, `phoneNumbers`...) are ignored, read-only ones are refused when a path
 * names them and ignored inside a path-less value. Values are checked afterwards, once, on the
 * final document (see the resource mappers).
 */

export type ScimDoc = Record<string, unknown>;

interface Target {
  attr: AttributeDef;
  sub: AttributeDef | null;
  filter: FilterNode | null;
}

function isUnassigned(value: unknown): boolean {
  return value === undefined || value === null || (Array.isArray(value) && value.length === 0);
}

/** A complex value with canonical sub-attribute names; unknown and read-only ones dropped. */
function canonicalValue(attr: AttributeDef, value: unknown, where: string): Record<string, unknown> {
  if (!isObject(value)) throw scimError('invalidSyntax', `${where} must be an object`);
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const sub = subAttr(attr, key);
    if (sub && sub.mutability !== 'readOnly' && v !== undefined) out[sub.name] = v;
  }
  return out;
}

function canonicalValues(attr: AttributeDef, value: unknown): Record<string, unknown>[] {
  const items = Array.isArray(value) ? value : [value];
  return items.map((v, i) => canonicalValue(attr, v, `${attr.name}[${i}]`));
}

function sameValue(attr: AttributeDef, a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const def = subAttr(attr, 'value');
  if (def && typeof a.value === 'string' && typeof b.value === 'string') {
    return def.caseExact ? a.value === b.value : a.value.toLowerCase() === b.value.toLowerCase();
  }
  return JSON.stringify(a) === JSON.stringify(b);
}

function elementsOf(doc: ScimDoc, attr: AttributeDef): Record<string, unknown>[] {
  const current = doc[attr.name];
  return Array.isArray(current) ? (current as Record<string, unknown>[]) : [];
}

function setOrDelete(doc: ScimDoc, key: string, value: unknown): void {
  if (isUnassigned(value) || (isObject(value) && Object.keys(value).length === 0)) delete doc[key];
  else doc[key] = value;
}

function refuseRequiredRemoval(attr: AttributeDef): void {
  if (attr.required) throw scimError('invalidValue', `${attr.name} is required and cannot be removed`);
}

/** The whole attribute: `userName`, `name`, `emails`. */
function applyToAttribute(
  doc: ScimDoc,
  op: PatchOpName,
  attr: AttributeDef,
  value: unknown,
  hasValue: boolean,
) {
  const key = attr.name;
  if (op === 'remove' || value === null) {
    if (op === 'remove' && attr.multiValued && hasValue && value !== null && value !== undefined) {
      // Entra's `{op: "Remove", path: "members", value: [{value: "id"}]}`: just those values
      // (none for an empty list: never all of them).
      const gone = canonicalValues(attr, value);
      const kept = elementsOf(doc, attr).filter((el) => !gone.some((g) => sameValue(attr, el, g)));
      setOrDelete(doc, key, kept);
      return;
    }
    refuseRequiredRemoval(attr);
    delete doc[key];
    return;
  }
  if (attr.multiValued) {
    const incoming = canonicalValues(attr, value);
    if (op === 'replace') {
      setOrDelete(doc, key, incoming);
      return;
    }
    const existing = elementsOf(doc, attr);
    const added = incoming.filter((n) => !existing.some((e) => sameValue(attr, e, n)));
    // At most one primary value (RFC 7643 section 2.4): a new primary demotes the others.
    if (added.some((a) => asBoolean(a.primary) === true)) {
      for (const e of existing) if (asBoolean(e.primary) === true) e.primary = false;
    }
    setOrDelete(doc, key, [...existing, ...added]);
    return;
  }
  if (attr.type === 'complex') {
    const current = doc[key];
    const merged = { ...(isObject(current) ? current : {}), ...canonicalValue(attr, value, key) };
    setOrDelete(doc, key, merged);
    return;
  }
  doc[key] = value;
}

/** A sub-attribute of a complex attribute, or of every value of a multi-valued one: `name.givenName`. */
function applyToSubAttribute(
  doc: ScimDoc,
  op: PatchOpName,
  attr: AttributeDef,
  sub: AttributeDef,
  value: unknown,
) {
  const remove = op === 'remove' || value === null;
  if (!attr.multiValued) {
    const current = doc[attr.name];
    const obj: Record<string, unknown> = isObject(current) ? { ...current } : {};
    if (remove) delete obj[sub.name];
    else obj[sub.name] = value;
    setOrDelete(doc, attr.name, obj);
    return;
  }
  const elements = elementsOf(doc, attr);
  if (remove) for (const el of elements) delete el[sub.name];
  else if (elements.length === 0) elements.push({ [sub.name]: value });
  else for (const el of elements) el[sub.name] = value;
  setOrDelete(doc, attr.name, elements);
}

/** The values a filter selects: `emails[type eq "work"]` or `emails[type eq "work"].value`. */
function applyToSelected(doc: ScimDoc, op: PatchOpName, target: Target, value: unknown, pathText: string) {
  const { attr, sub, filter } = target;
  const elements = elementsOf(doc, attr);
  const matched = elements.filter((el) => matchesValue(filter!, el, attr, 'invalidPath'));
  if (op === 'remove' || (value === null && sub !== null)) {
    if (sub === null)
      setOrDelete(
        doc,
        attr.name,
        elements.filter((el) => !matched.includes(el)),
      );
    else for (const el of matched) delete el[sub.name];
    return;
  }
  const patch = sub === null ? canonicalValue(attr, value, 'value') : { [sub.name]: value };
  if (matched.length === 0) {
    // RFC 7644 section 3.5.2.3: replace with no match is noTarget. For add we create the value
    // the filter pins down, as Entra expects for `emails[type eq "work"].value`.
    const pinned = op === 'add' ? pinnedValues(filter!, attr) : null;
    if (!pinned) throw scimError('noTarget', `No value of ${attr.name} matches the path "${pathText}"`);
    elements.push({ ...pinned, ...patch });
  } else {
    for (const el of matched) Object.assign(el, patch);
  }
  setOrDelete(doc, attr.name, elements);
}

function applyAt(
  doc: ScimDoc,
  op: PatchOpName,
  target: Target,
  value: unknown,
  hasValue: boolean,
  pathText: string,
) {
  if (target.filter) {
    applyToSelected(doc, op, target, value, pathText);
  } else if (target.sub) {
    applyToSubAttribute(doc, op, target.attr, target.sub, value);
  } else {
    applyToAttribute(doc, op, target.attr, value, hasValue);
  }
}

/**
 * What a path names, or null for an attribute we do not support (ignored). A read-only target
 * is refused (400 mutability) when the client named it in `path`, and skipped when it is a key
 * of a path-less value (Okta sends `id` there).
 */
function target(schema: ResourceSchema, path: PatchPath, text: string, explicit: boolean): Target | null {
  const resolved = resolveAttr(schema, path.attr);
  if (!resolved) return null;
  const sub = path.sub === null ? resolved.sub : (subAttr(resolved.attr, path.sub) ?? null);
  if (path.sub !== null && !sub) return null;
  if (resolved.attr.mutability === 'readOnly' || sub?.mutability === 'readOnly') {
    if (!explicit) return null;
    throw scimError('mutability', `${text} is read-only`);
  }
  if (path.filter && !(resolved.attr.multiValued && resolved.attr.type === 'complex')) {
    throw scimError('invalidPath', `${resolved.attr.name} is not multi-valued: "${text}" cannot filter it`);
  }
  return { attr: resolved.attr, sub, filter: path.filter };
}

/** A key of a path-less value as a path (`name.givenName`, even `emails[type eq "work"].value`), or null. */
function keyPath(key: string): PatchPath | null {
  if (key.toLowerCase() === 'schemas') return null;
  try {
    return parsePath(key);
  } catch {
    return null;
  }
}

/** Applies one operation to `doc` in place. */
export function applyOperation(doc: ScimDoc, operation: PatchOperation, schema: ResourceSchema): void {
  const { op, path, pathText } = operation;
  if (path === null) {
    // Without a path, value is an object of attributes (checked by parsePatchRequest).
    for (const [key, value] of Object.entries(operation.value as Record<string, unknown>)) {
      const keyTarget = keyPath(key);
      const found = keyTarget && target(schema, keyTarget, key, false);
      if (found) applyAt(doc, op, found, value, true, key);
    }
    return;
  }
  const found = target(schema, path, pathText!, true);
  if (found) applyAt(doc, op, found, operation.value, 'value' in operation, pathText!);
}

/**
 * A POST or PUT body as a document: attributes by canonical name, unknown and read-only ones
 * (`id`, `meta`, `groups`, extensions) dropped, null ones unassigned.
 */
export function normalizeResource(body: Record<string, unknown>, schema: ResourceSchema): ScimDoc {
  const doc: ScimDoc = {};
  for (const [key, value] of Object.entries(body)) {
    const keyTarget = value === null ? null : keyPath(key);
    const found = keyTarget && !keyTarget.filter && target(schema, keyTarget, key, false);
    if (found) applyAt(doc, 'replace', found, value, true, key);
  }
  return doc;
}
