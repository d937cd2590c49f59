import { MAX_COUNT } from './scim-http.js';
import { GROUP_SCHEMA, URN, USER_SCHEMA, type AttributeDef, type ResourceSchema } from './scim.schema.js';

/**
 * The discovery resources of RFC 7643 sections 5 to 7 (RFC 7644 section 4): what this service
 * provider supports, its resource types, and the schemas of the attributes it handles.
 */

const DOCS = '/docs';

export function serviceProviderConfig(base: string): Record<string, unknown> {
  return {
    schemas: [URN.serviceProviderConfig],
    documentationUri: `${base.replace(/\/api\/scim\/v2$/, '')}${DOCS}`,
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_COUNT },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'Bearer token',
        description: 'An admin Platform API token in "Authorization: Bearer <token>"',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
  };
}

const RESOURCE_TYPES = [
  { id: 'User', endpoint: '/Users', description: 'Console users of the account', schema: USER_SCHEMA },
  {
    id: 'Group',
    endpoint: '/Groups',
    description: 'Account-wide groups of console users',
    schema: GROUP_SCHEMA,
  },
];

export function resourceTypes(base: string): Record<string, unknown>[] {
  return RESOURCE_TYPES.map((t) => ({
    schemas: [URN.resourceType],
    id: t.id,
    name: t.id,
    endpoint: t.endpoint,
    description: t.description,
    schema: t.schema.id,
    schemaExtensions: [],
    meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/${t.id}` },
  }));
}

function attributeDefinition(def: AttributeDef): Record<string, unknown> {
  return {
    name: def.name,
    type: def.type,
    multiValued: def.multiValued,
    description: def.description,
    required: def.required,
    caseExact: def.caseExact,
    mutability: def.mutability,
    returned: def.returned,
    uniqueness: def.uniqueness,
    ...(def.canonicalValues ? { canonicalValues: def.canonicalValues } : {}),
    ...(def.referenceTypes ? { referenceTypes: def.referenceTypes } : {}),
    ...(def.subAttributes ? { subAttributes: def.subAttributes.map(attributeDefinition) } : {}),
  };
}

function schemaDefinition(schema: ResourceSchema, base: string): Record<string, unknown> {
  return {
    schemas: [URN.schema],
    id: schema.id,
    name: schema.name,
    description: schema.description,
    attributes: schema.attributes.map(attributeDefinition),
    meta: { resourceType: 'Schema', location: `${base}/Schemas/${schema.id}` },
  };
}

export function schemas(base: string): Record<string, unknown>[] {
  return [USER_SCHEMA, GROUP_SCHEMA].map((s) => schemaDefinition(s, base));
}
