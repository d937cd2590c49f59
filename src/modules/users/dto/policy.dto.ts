import { ApiProperty } from '@nestjs/swagger';
import { ALL_ACTIONS } from '../../../core/auth/action.js';
import { EnumField, NestedField, StringArrayField } from '../../../core/http/validation.js';

/** Resource types of the reference's Policy shape; the first five carry grants here. */
export const POLICY_RESOURCE_TYPES = [
  'Global',
  'Deployment',
  'Report',
  'ReportFolder',
  'Agent',
  'AgentSpace',
  'Workbook',
  'Dashboard',
  'Folder',
  'ChatThread',
] as const;
export type PolicyResourceType = (typeof POLICY_RESOURCE_TYPES)[number];

/** `resources` naming every resource of the type, now and to come (the reference's form). */
export const ALL_RESOURCES = 'All';

export class PolicyDto {
  @EnumField(POLICY_RESOURCE_TYPES, {
    enumName: 'PolicyResourceType',
    description: 'What the policy applies to',
  })
  resourceType: PolicyResourceType;

  @StringArrayField({ maxItems: 100, enum: ALL_ACTIONS, description: 'Actions granted on each resource' })
  actions: string[];

  @StringArrayField({
    maxItems: 1000,
    maxLength: 64,
    description:
      'Ids of the resources (as strings), or `["All"]` for every resource of the type, including ' +
      'those created later. `Global` takes `["All"]` (`["*"]` and `[]` are accepted and read back as `["All"]`)',
  })
  resources: string[];
}

export class PoliciesInputDto {
  @NestedField(() => PolicyDto, { isArray: true, maxItems: 200 })
  policies: PolicyDto[];
}

export class PoliciesResponseDto {
  @ApiProperty({ type: PolicyDto, isArray: true }) policies: PolicyDto[];
}
