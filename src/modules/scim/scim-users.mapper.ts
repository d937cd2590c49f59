import { isEmail } from 'class-validator';
import type { DirectoryMembership, DirectoryUser, DirectoryUserInput } from '../users/directory.service.js';
import { isNoEmail, NO_EMAIL_DOMAIN } from '../users/no-email.js';
import { asBoolean } from './filter/filter-eval.js';
import type { ScimDoc } from './patch/patch-engine.js';
import { isObject } from './patch/patch-request.js';
import { weakEtag } from './scim-http.js';
import { optionalString, requiredString } from './scim-values.js';
import { scimError } from './scim.errors.js';
import { URN } from './scim.schema.js';

const NAME_MAX = 255;
const EMAIL_MAX = 320;

/** The weak ETag of a user: a hash of every attribute we return, its groups' ids and names included. */
export function userEtag(user: DirectoryUser, groups: readonly DirectoryMembership[]): string {
  return weakEtag([
    'User',
    user.id,
    user.username,
    user.email,
    user.firstName,
    user.lastName,
    user.displayName,
    user.title,
    user.externalId,
    user.isDeactivated,
    groups.map((g) => [g.groupId, g.groupName]),
  ]);
}

/** The user's address as SCIM `emails`: none for a user provisioned without one (never the placeholder). */
function emailsOf(user: DirectoryUser): Array<Record<string, unknown>> | undefined {
  return isNoEmail(user.email) ? undefined : [{ value: user.email, type: 'work', primary: true }];
}

/** A user as a SCIM User resource (RFC 7643 section 4.1). Unassigned attributes are omitted. */
export function toScimUser(
  user: DirectoryUser,
  groups: readonly DirectoryMembership[],
  base: string,
): Record<string, unknown> {
  const name: Record<string, string> = {};
  const formatted = [user.firstName, user.lastName].filter((p) => p).join(' ');
  if (formatted) name.formatted = formatted;
  if (user.lastName) name.familyName = user.lastName;
  if (user.firstName) name.givenName = user.firstName;
  const location = `${base}/Users/${user.id}`;
  const emails = emailsOf(user);
  return {
    schemas: [URN.user],
    id: String(user.id),
    ...(user.externalId !== null ? { externalId: user.externalId } : {}),
    userName: user.username,
    ...(Object.keys(name).length > 0 ? { name } : {}),
    ...(user.displayName !== null ? { displayName: user.displayName } : {}),
    ...(user.title !== null ? { title: user.title } : {}),
    active: !user.isDeactivated,
    ...(emails ? { emails } : {}),
    ...(groups.length > 0
      ? {
          groups: groups.map((g) => ({
            value: String(g.groupId),
            $ref: `${base}/Groups/${g.groupId}`,
            display: g.groupName,
            type: 'direct',
          })),
        }
      : {}),
    meta: {
      resourceType: 'User',
      created: user.createdAt,
      lastModified: user.updatedAt,
      location,
      version: userEtag(user, groups),
    },
  };
}

/** The writable attributes of a user as a document for PATCH. */
export function userDocument(user: DirectoryUser): ScimDoc {
  const doc: ScimDoc = { userName: user.username, active: !user.isDeactivated };
  const name: Record<string, string> = {};
  if (user.firstName !== null) name.givenName = user.firstName;
  if (user.lastName !== null) name.familyName = user.lastName;
  if (Object.keys(name).length > 0) doc.name = name;
  if (user.displayName !== null) doc.displayName = user.displayName;
  if (user.title !== null) doc.title = user.title;
  if (user.externalId !== null) doc.externalId = user.externalId;
  const emails = emailsOf(user);
  if (emails) doc.emails = emails;
  return doc;
}

/**
 * The one address we store, from `emails`: the primary one, else the `work` one, else the first;
 * null for none (RFC 7643 requires only userName; the user then has no address, and none is
 * returned). A value without an address (what remains after Entra's
 * `remove emails[type eq "work"].value`) counts as none.
 */
function pickEmail(emails: unknown): string | null {
  const list = emails === undefined ? [] : emails;
  if (!Array.isArray(list)) throw scimError('invalidSyntax', 'emails must be an array');
  const values = list.flatMap((e: unknown, i) => {
    if (!isObject(e)) throw scimError('invalidSyntax', `emails[${i}] must be an object`);
    if (e.value === undefined || e.value === null) return [];
    if (typeof e.value !== 'string') throw scimError('invalidSyntax', `emails[${i}].value must be a string`);
    if (e.type !== undefined && e.type !== null && typeof e.type !== 'string') {
      throw scimError('invalidSyntax', `emails[${i}].type must be a string`);
    }
    const primary = e.primary === undefined || e.primary === null ? false : asBoolean(e.primary);
    if (primary === undefined) throw scimError('invalidSyntax', `emails[${i}].primary must be a boolean`);
    return [
      {
        value: e.value.trim(),
        work: typeof e.type === 'string' && e.type.toLowerCase() === 'work',
        primary,
      },
    ];
  });
  const chosen = values.find((e) => e.primary) ?? values.find((e) => e.work) ?? values[0];
  if (!chosen) return null;
  const email = chosen.value;
  if (email.length > EMAIL_MAX || !isEmail(email)) {
    throw scimError('invalidValue', `emails: "${email.slice(0, 100)}" is not a valid email address`);
  }
  // The placeholders' domain: an address there would be taken for "no address" and hidden.
  if (isNoEmail(email)) {
    throw scimError('invalidValue', `emails: the domain ${NO_EMAIL_DOMAIN} is reserved`);
  }
  return email.toLowerCase();
}

/** Whether writing `input` would leave the user exactly as it is (then nothing is written). */
export function unchanged(current: DirectoryUser, input: DirectoryUserInput): boolean {
  const sameEmail = input.email === null ? isNoEmail(current.email) : input.email === current.email;
  return (
    sameEmail &&
    input.username === current.username &&
    input.firstName === current.firstName &&
    input.lastName === current.lastName &&
    input.displayName === current.displayName &&
    input.title === current.title &&
    input.externalId === current.externalId &&
    input.isDeactivated === current.isDeactivated
  );
}

/**
 * Checks a whole user document (a POST or PUT body, or the result of a PATCH) and maps it to our
 * columns. An omitted `active` keeps the current state (a new user is active).
 */
export function userInput(doc: ScimDoc, current: DirectoryUser | null): DirectoryUserInput {
  const username = requiredString(doc.userName, 'userName', NAME_MAX);
  if (doc.name !== undefined && !isObject(doc.name))
    throw scimError('invalidSyntax', 'name must be an object');
  const name = isObject(doc.name) ? doc.name : {};
  let deactivated = current?.isDeactivated ?? false;
  if (doc.active !== undefined && doc.active !== null) {
    const active = asBoolean(doc.active);
    if (active === undefined) throw scimError('invalidSyntax', 'active must be a boolean');
    deactivated = !active;
  }
  return {
    username,
    email: pickEmail(doc.emails),
    firstName: optionalString(name.givenName, 'name.givenName', NAME_MAX),
    lastName: optionalString(name.familyName, 'name.familyName', NAME_MAX),
    displayName: optionalString(doc.displayName, 'displayName', NAME_MAX),
    title: optionalString(doc.title, 'title', NAME_MAX),
    externalId: optionalString(doc.externalId, 'externalId', NAME_MAX),
    isDeactivated: deactivated,
  };
}
