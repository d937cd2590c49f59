import { scimError } from './scim.errors.js';

/**
 * An optional string attribute of a document: null when unassigned or blank, 400 invalidSyntax
 * for another JSON type, 400 invalidValue when longer than `max`.
 */
export function optionalString(value: unknown, where: string, max: number): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw scimError('invalidSyntax', `${where} must be a string`);
  if (value.trim() === '') return null;
  if (value.length > max) throw scimError('invalidValue', `${where} must be at most ${max} characters`);
  return value;
}

/** A required string attribute: 400 invalidSyntax when missing, invalidValue when blank or too long. */
export function requiredString(value: unknown, where: string, max: number): string {
  if (value === undefined || value === null) throw scimError('invalidSyntax', `${where} is required`);
  const text = optionalString(value, where, max);
  if (text === null) throw scimError('invalidValue', `${where} must not be empty`);
  return text;
}
