import type { AttrPath } from './filter/filter-parser.js';

/** Schema and message URNs of RFC 7643 and RFC 7644. */
export const URN = {
  user: 'urn:ietf:params:scim:schemas:core:2.0:User',
  group: 'urn:ietf:params:scim:schemas:core:2.0:Group',
  serviceProviderConfig: 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig',
  resourceType: 'urn:ietf:params:scim:schemas:core:2.0:ResourceType',
  schema: 'urn:ietf:params:scim:schemas:core:2.0:Schema',
  listResponse: 'urn:ietf:params:scim:api:messages:2.0:ListResponse',
  searchRequest: 'urn:ietf:params:scim:api:messages:2.0:SearchRequest',
  patchOp: 'urn:ietf:params:scim:api:messages:2.0:PatchOp',
} as const;

export const SCIM_CONTENT_TYPE = 'application/scim+json; charset=utf-8';

export type AttrType = 'string' | 'boolean' | 'dateTime' | 'reference' | 'complex';
export type Mutability = 'readOnly' | 'readWrite' | 'immutable' | 'writeOnly';

/** An attribute definition as RFC 7643 section 7 publishes it, limited to what we support. */
export interface AttributeDef {
  name: string;
  type: AttrType;
  multiValued: boolean;
  description: string;
  required: boolean;
  caseExact: boolean;
  mutability: Mutability;
  returned: 'always' | 'default' | 'never' | 'request';
  uniqueness: 'none' | 'server' | 'global';
  canonicalValues?: string[];
  referenceTypes?: string[];
  subAttributes?: AttributeDef[];
}

export interface ResourceSchema {
  id: string;
  name: 'User' | 'Group';
  description: string;
  /** The attributes of the core schema (published by `/Schemas`). */
  attributes: AttributeDef[];
}

function attr(
  name: string,
  description: string,
  opts: Partial<Omit<AttributeDef, 'name' | 'description'>> = {},
): AttributeDef {
  return {
    name,
    type: 'string',
    multiValued: false,
    description,
    required: false,
    caseExact: false,
    mutability: 'readWrite',
    returned: 'default',
    uniqueness: 'none',
    ...opts,
  };
}

/** `id`, `externalId` and `meta`: common to every resource (RFC 7643 section 3.1). */
export const COMMON_ATTRIBUTES: AttributeDef[] = [
  attr('id', 'Assigned by the service provider; the integer id as a string', {
    caseExact: true,
    mutability: 'readOnly',
    returned: 'always',
    uniqueness: 'server',
  }),
  attr('externalId', "The identity provider's own identifier for the resource", { caseExact: true }),
  attr('meta', 'Resource metadata', {
    type: 'complex',
    mutability: 'readOnly',
    subAttributes: [
      attr('resourceType', 'User or Group', { caseExact: true, mutability: 'readOnly' }),
      attr('created', 'When the resource was created', { type: 'dateTime', mutability: 'readOnly' }),
      attr('lastModified', 'When the resource was last changed', {
        type: 'dateTime',
        mutability: 'readOnly',
      }),
      attr('location', 'The URI of the resource', { type: 'reference', mutability: 'readOnly' }),
      attr('version', 'The weak entity tag of the resource', { caseExact: true, mutability: 'readOnly' }),
    ],
  }),
];

export const USER_SCHEMA: ResourceSchema = {
  id: URN.user,
  name: 'User',
  description: 'A console user of the account',
  attributes: [
    attr('userName', 'Unique in the account, compared case-insensitively', {
      required: true,
      uniqueness: 'server',
    }),
    attr('name', "The user's name", {
      type: 'complex',
      subAttributes: [
        // readWrite as in RFC 7643: Entra's default mapping writes it on every update. A value
        // sent is accepted and ignored; the one returned is always derived.
        attr('formatted', 'Given and family name, always derived from them: a value sent is ignored'),
        attr('familyName', 'Family name'),
        attr('givenName', 'Given name'),
      ],
    }),
    attr('displayName', 'The name to display'),
    attr('title', 'Job title'),
    attr('active', 'false deactivates the user: their tokens stop working. Cannot be removed', {
      type: 'boolean',
    }),
    attr('emails', 'Optional; one address is stored: the primary one, else the work one, else the first', {
      type: 'complex',
      multiValued: true,
      subAttributes: [
        attr('value', 'The address, stored lowercased; unique in the account', { uniqueness: 'server' }),
        attr('type', 'Always work on output', { canonicalValues: ['work', 'home', 'other'] }),
        attr('primary', 'Always true on output', { type: 'boolean' }),
      ],
    }),
    attr('groups', 'The groups the user is a direct member of; change them through Groups', {
      type: 'complex',
      multiValued: true,
      mutability: 'readOnly',
      subAttributes: [
        attr('value', 'The group id', { caseExact: true, mutability: 'readOnly' }),
        attr('$ref', 'The URI of the group', {
          type: 'reference',
          caseExact: true,
          mutability: 'readOnly',
          referenceTypes: ['Group'],
        }),
        attr('display', 'The group name', { caseExact: true, mutability: 'readOnly' }),
        attr('type', 'Always direct', { mutability: 'readOnly', canonicalValues: ['direct'] }),
      ],
    }),
  ],
};

export const GROUP_SCHEMA: ResourceSchema = {
  id: URN.group,
  name: 'Group',
  description: 'An account-wide group of console users',
  attributes: [
    attr('displayName', 'The group name: unique in the account, compared exactly', {
      required: true,
      caseExact: true,
      uniqueness: 'server',
    }),
    attr('members', 'The users in the group', {
      type: 'complex',
      multiValued: true,
      subAttributes: [
        attr('value', 'The id of a user of the account', { caseExact: true, mutability: 'immutable' }),
        attr('$ref', 'The URI of the user', {
          type: 'reference',
          caseExact: true,
          mutability: 'immutable',
          referenceTypes: ['User'],
        }),
        attr('display', "The user's displayName, else userName", { mutability: 'readOnly' }),
        attr('type', 'Always User', {
          caseExact: true,
          mutability: 'immutable',
          canonicalValues: ['User'],
        }),
      ],
    }),
  ],
};

/** A resolved attribute reference: the attribute and, when one was named, its sub-attribute. */
export interface ResolvedAttr {
  attr: AttributeDef;
  sub: AttributeDef | null;
}

function byName(defs: readonly AttributeDef[] | undefined, name: string): AttributeDef | undefined {
  const lower = name.toLowerCase();
  return defs?.find((d) => d.name.toLowerCase() === lower);
}

/**
 * Finds an attribute of the resource by its (case-insensitive) name, optionally prefixed with
 * the resource's core schema URN. Null for an unknown attribute, including any attribute of an
 * extension schema (we support none).
 */
export function resolveAttr(schema: ResourceSchema, path: AttrPath): ResolvedAttr | null {
  if (path.uri !== null && path.uri.toLowerCase() !== schema.id.toLowerCase()) return null;
  const found = byName(schema.attributes, path.name) ?? byName(COMMON_ATTRIBUTES, path.name);
  if (!found) return null;
  if (path.sub === null) return { attr: found, sub: null };
  const sub = byName(found.subAttributes, path.sub);
  return sub ? { attr: found, sub } : null;
}

/** A sub-attribute of a complex attribute by its case-insensitive name. */
export function subAttr(parent: AttributeDef, name: string): AttributeDef | undefined {
  return byName(parent.subAttributes, name);
}
