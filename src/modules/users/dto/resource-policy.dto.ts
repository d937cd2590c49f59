import { ApiProperty } from '@nestjs/swagger';
import { ALL_ACTIONS } from '../../../core/auth/action.js';
import { EnumField, IntField } from '../../../core/http/validation.js';
import { POLICY_RESOURCE_TYPES, type PolicyResourceType } from './policy.dto.js';

const RESOURCE_ID =
  'The resource. `Global` names no resource: its id is not read (send 0); any other type needs the id of a ' +
  'resource of the account';

/** `GET /resource-policies/`: the resource whose policies to read. */
export class ResourcePolicyQueryDto {
  @EnumField(POLICY_RESOURCE_TYPES, {
    enumName: 'PolicyResourceType',
    description: 'The type of the resource',
  })
  resourceType: PolicyResourceType;

  @IntField({ query: true, min: 0, description: RESOURCE_ID })
  resourceId: number;
}

/** What `PUT /resource-policies/user` and `.../group` share: the resource and the action. */
class ResourcePolicyInputDto {
  @EnumField(POLICY_RESOURCE_TYPES, {
    enumName: 'PolicyResourceType',
    description: 'The type of the resource',
  })
  resourceType: PolicyResourceType;

  @IntField({ min: 0, description: RESOURCE_ID })
  resourceId: number;

  @EnumField(ALL_ACTIONS, {
    optional: true,
    nullable: true,
    enumName: 'RoleAction',
    description:
      'The one action the principal then holds on the resource, in place of what it held there; omitted or ' +
      'null removes its grants on the resource',
  })
  action?: string | null;
}

export class SetUserResourcePolicyDto extends ResourcePolicyInputDto {
  @IntField({ min: 1, description: 'A console user of the account' }) userId: number;
}

export class SetGroupResourcePolicyDto extends ResourcePolicyInputDto {
  @IntField({ min: 1, description: 'A group of the account' }) groupId: number;
}

export class ResourceUserPolicyDto {
  @ApiProperty() userId: number;
  @ApiProperty({ type: String, isArray: true, description: 'Granted to the user directly, sorted' })
  actions: string[];
}

export class ResourceGroupPolicyDto {
  @ApiProperty() groupId: number;
  @ApiProperty({
    type: String,
    isArray: true,
    description: 'Granted to the group (its members hold them), sorted',
  })
  actions: string[];
}

export class ResourcePoliciesDto {
  @ApiProperty({ enum: POLICY_RESOURCE_TYPES, enumName: 'PolicyResourceType' })
  resourceType: PolicyResourceType;
  @ApiProperty({ description: 'As asked (0 for Global)' }) resourceId: number;
  @ApiProperty({ type: ResourceUserPolicyDto, isArray: true, description: 'By user id' })
  userPolicies: ResourceUserPolicyDto[];
  @ApiProperty({ type: ResourceGroupPolicyDto, isArray: true, description: 'By group id' })
  groupPolicies: ResourceGroupPolicyDto[];
}
