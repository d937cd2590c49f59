import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/**
 * OpenAPI descriptions of the SCIM messages. Bodies are read as plain objects and checked by
 * the SCIM module itself (RFC 7643 attribute names are case-insensitive and unknown attributes
 * are ignored, which the strict global validation pipe would refuse).
 */

const USER_URN = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP_URN = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const LIST_URN = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';

export class ScimMetaDto {
  @ApiProperty({ example: 'User' }) resourceType: string;
  @ApiPropertyOptional({ format: 'date-time' }) created?: string;
  @ApiPropertyOptional({ format: 'date-time' }) lastModified?: string;
  @ApiProperty({ format: 'uri' }) location: string;
  @ApiPropertyOptional({ description: 'The weak ETag of the resource', example: 'W/"3q2-7w"' })
  version?: string;
}

export class ScimNameDto {
  @ApiPropertyOptional({ readOnly: true, description: 'Derived from the given and family names' })
  formatted?: string;
  @ApiPropertyOptional() familyName?: string;
  @ApiPropertyOptional() givenName?: string;
}

export class ScimEmailDto {
  @ApiProperty({ format: 'email' }) value: string;
  @ApiPropertyOptional({ example: 'work' }) type?: string;
  @ApiPropertyOptional({ description: 'Entra ID\'s "True"/"False" strings are accepted too' })
  primary?: boolean;
}

/** A group of a user; the response also carries `$ref`, the group's URI. */
export class ScimUserGroupDto {
  @ApiProperty({ description: 'The group id' }) value: string;
  @ApiProperty({ description: 'The group name' }) display: string;
  @ApiProperty({ example: 'direct' }) type: string;
}

export class ScimUserDto {
  @ApiProperty({ type: [String], example: [USER_URN] }) schemas: string[];
  @ApiProperty({ readOnly: true, example: '42' }) id: string;
  @ApiPropertyOptional({ description: "The identity provider's id for the user (case-sensitive)" })
  externalId?: string;
  @ApiProperty({ description: 'Unique in the account, compared case-insensitively' }) userName: string;
  @ApiPropertyOptional({ type: ScimNameDto }) name?: ScimNameDto;
  @ApiPropertyOptional() displayName?: string;
  @ApiPropertyOptional() title?: string;
  @ApiPropertyOptional({ description: 'false deactivates the user (their tokens stop working)' })
  active?: boolean;
  @ApiPropertyOptional({
    type: ScimEmailDto,
    isArray: true,
    description: 'One address is stored: the primary one, else the work one, else the first',
  })
  emails?: ScimEmailDto[];
  @ApiPropertyOptional({ type: ScimUserGroupDto, isArray: true, readOnly: true })
  groups?: ScimUserGroupDto[];
  @ApiPropertyOptional({ type: ScimMetaDto, readOnly: true }) meta?: ScimMetaDto;
}

/** A member of a group; the response also carries `$ref`, the user's URI. */
export class ScimMemberDto {
  @ApiProperty({ description: 'The id of a user of the account', example: '42' }) value: string;
  @ApiPropertyOptional({ readOnly: true, description: "The user's displayName, else userName" })
  display?: string;
  @ApiPropertyOptional({ example: 'User' }) type?: string;
}

export class ScimGroupDto {
  @ApiProperty({ type: [String], example: [GROUP_URN] }) schemas: string[];
  @ApiProperty({ readOnly: true, example: '7' }) id: string;
  @ApiPropertyOptional({ description: "The identity provider's id for the group" }) externalId?: string;
  @ApiProperty({ description: 'Unique in the account, compared exactly' }) displayName: string;
  @ApiPropertyOptional({ type: ScimMemberDto, isArray: true }) members?: ScimMemberDto[];
  @ApiPropertyOptional({ type: ScimMetaDto, readOnly: true }) meta?: ScimMetaDto;
}

class ScimListDto {
  @ApiProperty({ type: [String], example: [LIST_URN] }) schemas: string[];
  @ApiProperty({ type: 'integer', description: 'Resources matching the filter, in all pages' })
  totalResults: number;
  @ApiProperty({ type: 'integer', description: 'Resources in this page' }) itemsPerPage: number;
  @ApiProperty({ type: 'integer', description: '1-based index of the first resource of this page' })
  startIndex: number;
}

export class ScimUserListDto extends ScimListDto {
  @ApiProperty({ type: ScimUserDto, isArray: true }) Resources: ScimUserDto[];
}

export class ScimGroupListDto extends ScimListDto {
  @ApiProperty({ type: ScimGroupDto, isArray: true }) Resources: ScimGroupDto[];
}

export class ScimPatchOperationDto {
  @ApiProperty({ enum: ['add', 'remove', 'replace'], description: 'Case-insensitive' }) op: string;
  @ApiPropertyOptional({ example: 'emails[type eq "work"].value' }) path?: string;
  @ApiPropertyOptional({
    description: 'Without a path: an object of attributes',
    oneOf: [
      { type: 'string' },
      { type: 'boolean' },
      { type: 'number' },
      { type: 'object' },
      { type: 'array', items: {} },
    ],
  })
  value?: unknown;
}

export class ScimPatchOpDto {
  @ApiProperty({ type: [String], example: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'] })
  schemas: string[];
  @ApiProperty({ type: ScimPatchOperationDto, isArray: true }) Operations: ScimPatchOperationDto[];
}

export class ScimSearchRequestDto {
  @ApiProperty({ type: [String], example: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'] })
  schemas: string[];
  @ApiPropertyOptional({ example: 'userName eq "jane@example.com"' }) filter?: string;
  @ApiPropertyOptional({ type: [String] }) attributes?: string[];
  @ApiPropertyOptional({ type: [String] }) excludedAttributes?: string[];
  @ApiPropertyOptional({ type: 'integer', description: '1-based; below 1 means 1' }) startIndex?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'Default 100, at most 1000; negative means 0' })
  count?: number;
}

/** The SCIM error body (RFC 7644 section 3.12). */
export class ScimErrorDto {
  @ApiProperty({ type: [String], example: ['urn:ietf:params:scim:api:messages:2.0:Error'] })
  schemas: string[];
  @ApiProperty({ description: 'The HTTP status, as a string (the examples of each response show it)' })
  status: string;
  @ApiPropertyOptional({ description: 'The RFC 7644 error type, for 400 and 409' })
  scimType?: string;
  @ApiProperty() detail: string;
}

class ScimSupportedDto {
  @ApiProperty() supported: boolean;
}

class ScimBulkDto extends ScimSupportedDto {
  @ApiProperty({ type: 'integer' }) maxOperations: number;
  @ApiProperty({ type: 'integer' }) maxPayloadSize: number;
}

class ScimFilterSupportDto extends ScimSupportedDto {
  @ApiProperty({ type: 'integer' }) maxResults: number;
}

class ScimAuthenticationSchemeDto {
  @ApiProperty({ example: 'oauthbearertoken' }) type: string;
  @ApiProperty() name: string;
  @ApiProperty() description: string;
  @ApiProperty() primary: boolean;
}

export class ScimServiceProviderConfigDto {
  @ApiProperty({ type: [String] }) schemas: string[];
  @ApiPropertyOptional() documentationUri?: string;
  @ApiProperty({ type: ScimSupportedDto }) patch: ScimSupportedDto;
  @ApiProperty({ type: ScimBulkDto }) bulk: ScimBulkDto;
  @ApiProperty({ type: ScimFilterSupportDto }) filter: ScimFilterSupportDto;
  @ApiProperty({ type: ScimSupportedDto }) changePassword: ScimSupportedDto;
  @ApiProperty({ type: ScimSupportedDto }) sort: ScimSupportedDto;
  @ApiProperty({ type: ScimSupportedDto }) etag: ScimSupportedDto;
  @ApiProperty({ type: ScimAuthenticationSchemeDto, isArray: true })
  authenticationSchemes: ScimAuthenticationSchemeDto[];
  @ApiProperty({ type: ScimMetaDto }) meta: ScimMetaDto;
}

export class ScimResourceTypeDto {
  @ApiProperty({ type: [String] }) schemas: string[];
  @ApiProperty({ example: 'User' }) id: string;
  @ApiProperty({ example: 'User' }) name: string;
  @ApiProperty({ example: '/Users' }) endpoint: string;
  @ApiProperty() description: string;
  @ApiProperty({ example: USER_URN }) schema: string;
  @ApiProperty({ type: [Object] }) schemaExtensions: object[];
  @ApiProperty({ type: ScimMetaDto }) meta: ScimMetaDto;
}

export class ScimAttributeDto {
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['string', 'boolean', 'dateTime', 'reference', 'complex'] }) type: string;
  @ApiProperty() multiValued: boolean;
  @ApiProperty() description: string;
  @ApiProperty() required: boolean;
  @ApiProperty() caseExact: boolean;
  @ApiProperty({ enum: ['readOnly', 'readWrite', 'immutable', 'writeOnly'] }) mutability: string;
  @ApiProperty({ enum: ['always', 'default', 'never', 'request'] }) returned: string;
  @ApiProperty({ enum: ['none', 'server', 'global'] }) uniqueness: string;
  @ApiPropertyOptional({ type: [String] }) canonicalValues?: string[];
  @ApiPropertyOptional({ type: [String] }) referenceTypes?: string[];
  @ApiPropertyOptional({ type: () => ScimAttributeDto, isArray: true }) subAttributes?: ScimAttributeDto[];
}

export class ScimSchemaDto {
  @ApiProperty({ type: [String] }) schemas: string[];
  @ApiProperty({ example: USER_URN }) id: string;
  @ApiProperty({ example: 'User' }) name: string;
  @ApiProperty() description: string;
  @ApiProperty({ type: ScimAttributeDto, isArray: true }) attributes: ScimAttributeDto[];
  @ApiProperty({ type: ScimMetaDto }) meta: ScimMetaDto;
}

export class ScimResourceTypeListDto extends ScimListDto {
  @ApiProperty({ type: ScimResourceTypeDto, isArray: true }) Resources: ScimResourceTypeDto[];
}

export class ScimSchemaListDto extends ScimListDto {
  @ApiProperty({ type: ScimSchemaDto, isArray: true }) Resources: ScimSchemaDto[];
}
