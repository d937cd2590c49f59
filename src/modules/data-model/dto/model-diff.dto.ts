import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { BoolField } from '../../../core/http/validation.js';
import type { AttributeChange, CubeDiff, DiffChange, DiffMemberKind, MemberDiff } from '../model-diff.js';
import { BranchNameField } from './branch-name.js';
import { ValidationErrorDto } from './data-model.dto.js';
import { ImpactItemDto } from './impact-item.dto.js';

const CHANGES: DiffChange[] = ['added', 'removed', 'renamed', 'changed'];
const MEMBER_KINDS: DiffMemberKind[] = ['measure', 'dimension', 'segment', 'join', 'pre_aggregation'];
/** Any JSON value (an attribute as the compiler evaluated it). */
const ANY_JSON = {
  nullable: true,
  oneOf: [
    { type: 'object', additionalProperties: true },
    { type: 'array', items: {} },
    { type: 'string' },
    { type: 'number' },
    { type: 'boolean' },
  ],
};

export class ModelDiffQueryDto {
  @BranchNameField({
    optional: true,
    description: 'The branch compared against (default: the head branch’s parent, else the deploy branch)',
  })
  base?: string;

  @BranchNameField({
    optional: true,
    description:
      'The branch reviewed (default: your active dev-mode branch, else the deploy branch); not with devMode',
  })
  head?: string;

  @BoolField({
    optional: true,
    query: true,
    description: 'Review your active dev-mode branch with its pending changes (not with head)',
  })
  devMode?: boolean;
}

export class ModelDiffSideDto {
  @ApiProperty() branchName: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'The commit compared (with devMode, the pending changes’ commit); null for a branch without commits',
  })
  commit: string | null;
  @ApiProperty() valid: boolean;
  @ApiProperty({ type: [ValidationErrorDto] }) errors: ValidationErrorDto[];
}

export class AttributeChangeDto implements AttributeChange {
  @ApiProperty({ example: 'type' }) attribute: string;
  @ApiProperty({ ...ANY_JSON, description: 'null when it was not set' }) before: unknown;
  @ApiProperty({ ...ANY_JSON, description: 'null when it is no longer set' }) after: unknown;
}

export class MemberDiffDto implements MemberDiff {
  @ApiProperty({ enum: MEMBER_KINDS }) kind: DiffMemberKind;
  @ApiProperty({ description: 'The name in head (in base for a removed member)' }) name: string;
  @ApiProperty({ enum: CHANGES }) change: DiffChange;
  @ApiPropertyOptional({ description: 'For `renamed`: the name in base' }) previousName?: string;
  @ApiProperty({ type: [AttributeChangeDto], description: 'For `changed`: what differs' })
  attributes: AttributeChangeDto[];
  @ApiProperty() breaking: boolean;
  @ApiProperty({ type: [String], description: 'Why it is breaking; empty when it is not' }) reasons: string[];
}

export class CubeDiffDto implements CubeDiff {
  @ApiProperty({ description: 'The name in head (in base for a removed cube or view)' }) name: string;
  @ApiProperty({ enum: ['cube', 'view'] }) kind: 'cube' | 'view';
  @ApiProperty({ enum: CHANGES }) change: DiffChange;
  @ApiPropertyOptional({ description: 'For `renamed`: the name in base' }) previousName?: string;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'cubes/orders.yml',
    description: 'Relative to model/',
  })
  fileName: string | null;
  @ApiProperty({
    type: [AttributeChangeDto],
    description: 'For `changed`: its own attributes that differ (`public`, `sql`, `accessPolicy`...)',
  })
  attributes: AttributeChangeDto[];
  @ApiProperty({ type: [MemberDiffDto], description: 'For `changed`: its members that differ' })
  members: MemberDiffDto[];
  @ApiProperty({ description: 'Its own change or one of its members’ is breaking' }) breaking: boolean;
  @ApiProperty({ type: [String], description: 'Why its own change is breaking' }) reasons: string[];
}

export class FileChangeDto {
  @ApiProperty({ example: 'model/cubes/orders.yml', description: 'Relative to the project root' })
  path: string;
  @ApiProperty({ enum: ['added', 'deleted', 'modified', 'renamed'] }) change:
    'added' | 'deleted' | 'modified' | 'renamed';
  @ApiPropertyOptional({ description: 'For `renamed`: the path in base' }) previousPath?: string;
}

export class ModelDiffDto {
  @ApiProperty() deploymentId: number;
  @ApiProperty({ type: ModelDiffSideDto }) base: ModelDiffSideDto;
  @ApiProperty({ type: ModelDiffSideDto }) head: ModelDiffSideDto;
  @ApiProperty({
    description: 'A change below is breaking, or head does not compile while base does',
  })
  breaking: boolean;
  @ApiProperty({
    type: [CubeDiffDto],
    description: 'Changed cubes and views by name; empty when a side does not compile',
  })
  cubes: CubeDiffDto[];
  @ApiProperty({ type: [FileChangeDto], description: 'Files that differ, by path' }) files: FileChangeDto[];
  @ApiProperty({
    type: [ImpactItemDto],
    description: 'Stored content head would break; empty when a side does not compile',
  })
  impact: ImpactItemDto[];
}
