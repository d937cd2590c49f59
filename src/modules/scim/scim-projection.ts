import { parseAttrName } from './filter/filter-parser.js';
import { resolveAttr, type ResourceSchema } from './scim.schema.js';

/** `attributes` / `excludedAttributes` (RFC 7644 section 3.4.2.5), as canonical names. */
export interface Projection {
  /** Only these (and `id`, `schemas`) when not null. */
  attributes: Array<{ attr: string; sub: string | null }> | null;
  excluded: Array<{ attr: string; sub: string | null }>;
}

export const FULL_PROJECTION: Projection = { attributes: null, excluded: [] };

const ALWAYS = new Set(['schemas', 'id']);

function names(raw: string | null, schema: ResourceSchema): Array<{ attr: string; sub: string | null }> {
  if (raw === null) return [];
  const out: Array<{ attr: string; sub: string | null }> = [];
  for (const part of raw.split(',')) {
    const path = parseAttrName(part.trim());
    const resolved = path && resolveAttr(schema, path);
    // Names we do not know (extension attributes, typos) select nothing.
    if (resolved) out.push({ attr: resolved.attr.name, sub: resolved.sub?.name ?? null });
  }
  return out;
}

/** Reads the comma-separated lists; `attributes` wins when both are sent. */
export function parseProjection(
  attributes: string | null,
  excluded: string | null,
  schema: ResourceSchema,
): Projection {
  if (attributes !== null && attributes.trim() !== '') {
    return { attributes: names(attributes, schema), excluded: [] };
  }
  return { attributes: null, excluded: names(excluded, schema) };
}

/** Whether the projection returns `attr` at all (so it need not be loaded when it does not). */
export function projects(projection: Projection, attr: string): boolean {
  if (projection.attributes) return projection.attributes.some((a) => a.attr === attr);
  return !projection.excluded.some((e) => e.attr === attr && e.sub === null);
}

function pick(value: unknown, subs: string[]): unknown {
  const keep = (obj: unknown) =>
    Object.fromEntries(Object.entries(obj as Record<string, unknown>).filter(([k]) => subs.includes(k)));
  return Array.isArray(value) ? value.map(keep) : keep(value);
}

function drop(value: unknown, sub: string): unknown {
  const without = (obj: unknown) => {
    const { [sub]: _gone, ...rest } = obj as Record<string, unknown>;
    return rest;
  };
  return Array.isArray(value) ? value.map(without) : without(value);
}

/** The resource with only the requested attributes; `id` and `schemas` are always returned. */
export function project(resource: Record<string, unknown>, projection: Projection): Record<string, unknown> {
  if (projection.attributes) {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(resource)) {
      const asked = projection.attributes.filter((a) => a.attr === key);
      if (ALWAYS.has(key) || asked.some((a) => a.sub === null)) out[key] = value;
      else if (asked.length > 0 && typeof value === 'object' && value !== null) {
        out[key] = pick(
          value,
          asked.map((a) => a.sub!),
        );
      }
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(resource)) {
    const excluded = projection.excluded.filter((e) => e.attr === key);
    if (ALWAYS.has(key) || excluded.length === 0) out[key] = value;
    else if (excluded.every((e) => e.sub !== null) && typeof value === 'object' && value !== null) {
      out[key] = excluded.reduce((v, e) => drop(v, e.sub!), value as unknown);
    }
  }
  return out;
}
