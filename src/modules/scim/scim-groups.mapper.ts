import type { DirectoryGroup, DirectoryMembership } from '../users/directory.service.js';
import type { ScimDoc } from './patch/patch-engine.js';
import { weakEtag } from './scim-http.js';
import { optionalString, requiredString } from './scim-values.js';
import { scimError } from './scim.errors.js';
import { URN } from './scim.schema.js';
import { isObject } from './patch/patch-request.js';

/** The longest group name (the `groups.name` column). */
const GROUP_NAME_MAX = 100;
const EXTERNAL_ID_MAX = 255;

export interface GroupAttributes {
  name: string;
  externalId: string | null;
}

/** The weak ETag of a group: a hash of its attributes and of its member ids. */
export function groupEtag(group: DirectoryGroup): string {
  return weakEtag(['Group', group.id, group.name, group.externalId, group.membersDigest]);
}

/**
 * A group as a SCIM Group resource (RFC 7643 section 4.2). `members` is left out when the caller
 * did not load them (`excludedAttributes=members`) or there are none.
 */
export function toScimGroup(
  group: DirectoryGroup,
  members: readonly DirectoryMembership[] | null,
  base: string,
): Record<string, unknown> {
  return {
    schemas: [URN.group],
    id: String(group.id),
    ...(group.externalId !== null ? { externalId: group.externalId } : {}),
    displayName: group.name,
    ...(members && members.length > 0
      ? {
          members: members.map((m) => ({
            value: String(m.userId),
            $ref: `${base}/Users/${m.userId}`,
            display: m.userDisplay,
            type: 'User',
          })),
        }
      : {}),
    meta: {
      resourceType: 'Group',
      created: group.createdAt,
      lastModified: group.updatedAt,
      location: `${base}/Groups/${group.id}`,
      version: groupEtag(group),
    },
  };
}

/** The writable attributes of a group other than its members, as a document for PATCH. */
export function groupDocument(group: DirectoryGroup): ScimDoc {
  return { displayName: group.name, ...(group.externalId !== null ? { externalId: group.externalId } : {}) };
}

/** Checks a group document's attributes (not its members). */
export function groupAttributes(doc: ScimDoc): GroupAttributes {
  const name = requiredString(doc.displayName, 'displayName', GROUP_NAME_MAX).trim();
  return { name, externalId: optionalString(doc.externalId, 'externalId', EXTERNAL_ID_MAX) };
}

/**
 * The member values of a `members` value (`[{value: "12"}]`, or a single object): their `value`
 * strings. A member whose `type` is not `User` is refused: groups hold users only.
 */
export function memberValues(value: unknown, where = 'members'): string[] {
  if (value === undefined || value === null) return [];
  const items = Array.isArray(value) ? value : [value];
  return items.map((item: unknown, i) => {
    if (!isObject(item)) throw scimError('invalidSyntax', `${where}[${i}] must be an object`);
    const entry = Object.fromEntries(Object.entries(item).map(([k, v]) => [k.toLowerCase(), v]));
    if (typeof entry.type === 'string' && entry.type.toLowerCase() !== 'user') {
      throw scimError('invalidValue', `${where}[${i}]: only users can be members of a group`);
    }
    if (typeof entry.value === 'string' && entry.value.trim() !== '') return entry.value.trim();
    if (typeof entry.value === 'number') return String(entry.value);
    throw scimError('invalidSyntax', `${where}[${i}].value must be the id of a user`);
  });
}
