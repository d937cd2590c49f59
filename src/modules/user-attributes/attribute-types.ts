/** The types a user attribute can have; an attribute's type never changes. */
export const ATTRIBUTE_TYPES = ['string', 'number', 'boolean', 'string_array', 'number_array'] as const;
export type AttributeType = (typeof ATTRIBUTE_TYPES)[number];

/** A value of one of the types, as stored (JSON) and returned. */
export type AttributeValue = string | number | boolean | string[] | number[];

/** Attribute names are keys in security contexts: identifier-like, at most 64 characters. */
export const ATTRIBUTE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

export const MAX_STRING_LENGTH = 1000;
export const MAX_ARRAY_ITEMS = 100;

/** A decimal number as text: `42`, `-0.5`, `1e3`; no hex, no blanks, no `Infinity`. */
const DECIMAL = /^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isShortString = (v: unknown): v is string => typeof v === 'string' && v.length <= MAX_STRING_LENGTH;

/**
 * Why `value` is not a valid value of `type`, or null when it is. Values are JSON as sent:
 * `"true"` is a string, never a boolean.
 */
export function valueProblem(type: AttributeType, value: unknown): string | null {
  switch (type) {
    case 'string':
      return isShortString(value) ? null : `must be a string of at most ${MAX_STRING_LENGTH} characters`;
    case 'number':
      return isFiniteNumber(value) ? null : 'must be a finite number';
    case 'boolean':
      return typeof value === 'boolean' ? null : 'must be true or false';
    case 'string_array':
      return Array.isArray(value) && value.length <= MAX_ARRAY_ITEMS && value.every(isShortString)
        ? null
        : `must be an array of at most ${MAX_ARRAY_ITEMS} strings of at most ${MAX_STRING_LENGTH} characters`;
    case 'number_array':
      return Array.isArray(value) && value.length <= MAX_ARRAY_ITEMS && value.every(isFiniteNumber)
        ? null
        : `must be an array of at most ${MAX_ARRAY_ITEMS} finite numbers`;
  }
}

/**
 * Parses a default value (always a string) as `type`: a decimal number, `true`/`false`, or a
 * JSON array of the element type. Throws nothing; null when the text does not parse.
 */
export function parseDefault(type: AttributeType, text: string): AttributeValue | null {
  let value: unknown;
  switch (type) {
    case 'string':
      value = text;
      break;
    case 'number':
      value = DECIMAL.test(text) ? Number(text) : null;
      break;
    case 'boolean':
      value = text === 'true' ? true : text === 'false' ? false : null;
      break;
    case 'string_array':
    case 'number_array':
      try {
        value = JSON.parse(text);
      } catch {
        value = null;
      }
      break;
  }
  return value !== null && valueProblem(type, value) === null ? (value as AttributeValue) : null;
}

/** What a default value of `type` must look like, for error messages. */
export function defaultValueHint(type: AttributeType): string {
  switch (type) {
    case 'string':
      return `a string of at most ${MAX_STRING_LENGTH} characters`;
    case 'number':
      return 'a finite decimal number such as 42 or -0.5';
    case 'boolean':
      return 'true or false';
    case 'string_array':
      return `a JSON array of at most ${MAX_ARRAY_ITEMS} strings, such as ["a","b"]`;
    case 'number_array':
      return `a JSON array of at most ${MAX_ARRAY_ITEMS} finite numbers, such as [1,2.5]`;
  }
}

/** The value as text for display: arrays joined with ", ". */
export function formatValue(value: AttributeValue | null): string | null {
  if (value === null) return null;
  if (Array.isArray(value)) return value.map((v) => String(v)).join(', ');
  return String(value);
}
