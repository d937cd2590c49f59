import { randomInt } from 'node:crypto';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { coreError } from '../../core/errors/api-error.js';
import { flattenValidationErrors } from '../../core/http/validation.pipe.js';

/** Widget types clients are told about. */
export const ADVERTISED_WIDGET_TYPES = [
  'CHART',
  'TEXT',
  'FILTER',
  'AI',
  'TIME_GRAIN',
  'FIELD',
  'PARENT',
  'SPACER',
  'DIVIDER',
  'CONTAINER',
] as const;

/**
 * Widget types accepted on input: the advertised ones plus the retired name of the tabbed
 * container, which older dashboards and clients still carry. It is stored and returned as sent.
 */
export const ACCEPTED_WIDGET_TYPES: readonly string[] = [...ADVERTISED_WIDGET_TYPES, 'TABS_CONTAINER'];

export const DASHBOARD_KINDS = ['CLASSIC', 'APP'] as const;
export const DASHBOARD_STATUSES = ['draft', 'published', 'archived'] as const;
export const REPORT_SNAPSHOT_KINDS = ['vega', 'table', 'kpi', 'html', 'map', 'sankey'] as const;
export const MAX_WIDGETS = 500;

export const DEFAULT_WORKBOOK_NAME = 'Untitled workbook';
export const MAX_NAME_LENGTH = 255;

/** A slug after normalisation: lowercase letters, digits, `.`, `_` and `-`, starting alphanumeric. */
export const SLUG_PATTERN = /^[a-z0-9][a-z0-9._-]*$/;
export const MAX_SLUG_LENGTH = 255;

/** Trims and lowercases a slug; anything left that is not a slug is a 400 naming `field`. */
export function normalizeSlug(raw: string, field = 'slug'): string {
  const slug = raw.trim().toLowerCase();
  if (slug.length < 1 || slug.length > MAX_SLUG_LENGTH) {
    throw coreError('validation_failed', [
      `${field} must be 1 to ${MAX_SLUG_LENGTH} characters after trimming`,
    ]);
  }
  if (!SLUG_PATTERN.test(slug)) {
    throw coreError('validation_failed', [
      `${field} may contain only letters, digits, ".", "_" and "-", and must start with a letter or digit`,
    ]);
  }
  return slug;
}

/** A trimmed workbook name; blank names are refused rather than stored empty. */
export function normalizeName(raw: string): string {
  const name = raw.trim();
  if (name === '') throw coreError('validation_failed', ['name must not be blank']);
  return name;
}

/** "Copy of <name>", cut to the column's length. */
export function copyName(name: string): string {
  return `Copy of ${name}`.slice(0, MAX_NAME_LENGTH);
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A random public identifier of `length` alphanumeric characters (uniform, from the CSPRNG). */
export function randomPublicId(length = 12): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return out;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Replaces every numeric `reportId` inside `value` (at any depth) that `ids` maps. */
function repointValue(value: unknown, ids: ReadonlyMap<number, number>): unknown {
  if (Array.isArray(value)) return value.map((v) => repointValue(v, ids));
  if (!isRecord(value)) return value;
  // fromEntries keeps every key an own property, `__proto__` included.
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [
      key,
      key === 'reportId' && typeof v === 'number' && ids.has(v) ? ids.get(v) : repointValue(v, ids),
    ]),
  );
}

/**
 * A copy of a dashboard config whose widget configs point at copied reports: any numeric
 * `reportId` inside a widget's `config` that `ids` maps (old report id to new) is replaced.
 * References to reports outside the map are left alone.
 */
export function repointReportIds<T>(config: T, ids: ReadonlyMap<number, number>): T {
  if (!isRecord(config) || !Array.isArray(config.widgets)) return config;
  return {
    ...config,
    widgets: config.widgets.map((widget: unknown) =>
      isRecord(widget) && isRecord(widget.config)
        ? { ...widget, config: repointValue(widget.config, ids) }
        : widget,
    ),
  };
}

/**
 * Merges `patch` into `current` one level deep, as a JSON merge patch does: a `null` value
 * removes the key, any other value replaces it.
 */
export function mergeMeta(
  current: Record<string, unknown>,
  patch: Record<string, unknown>,
): Record<string, unknown> {
  const out = new Map(Object.entries(current));
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) out.delete(key);
    else out.set(key, value);
  }
  return Object.fromEntries(out);
}

/** JSON with object keys sorted, so two values compare equal whatever their key order. */
export function canonicalJson(value: unknown): string {
  const sort = (v: unknown): Json => {
    if (Array.isArray(v)) return v.map(sort);
    if (isRecord(v)) {
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .filter((k) => v[k] !== undefined)
          .map((k) => [k, sort(v[k])]),
      );
    }
    return (v ?? null) as Json;
  };
  return JSON.stringify(sort(value));
}

/**
 * Validates a plain value against a DTO class with the same rules as the request pipe (unknown
 * keys refused), for JSON that arrives inside a free-form field or comes from storage. Messages
 * name the fields under `path`. Returns the value as plain JSON.
 */
export async function validateDashboardConfig(
  type: new () => object,
  value: unknown,
  path: string,
): Promise<Record<string, unknown>> {
  if (!isRecord(value)) throw coreError('validation_failed', [`${path} must be an object`]);
  const instance = plainToInstance(type, value, { exposeUnsetFields: false });
  const errors = await validate(instance, {
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    validationError: { target: false, value: false },
  });
  if (errors.length > 0) throw coreError('validation_failed', flattenValidationErrors(errors, path));
  return JSON.parse(JSON.stringify(instance)) as Record<string, unknown>;
}
