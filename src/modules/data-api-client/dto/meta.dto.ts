import { ApiProperty } from '@nestjs/swagger';
import { IntField, NestedField, StringArrayField } from '../../../core/http/validation.js';

/** What `POST /meta/` describes: one deployment's model, all of it or the cubes and views named. */
export class MetaSelectorsDto {
  @IntField({ min: 1, description: 'The deployment whose data model to describe' })
  deploymentId: number;

  @StringArrayField({
    optional: true,
    maxItems: 1000,
    maxLength: 255,
    description: 'Names of the cubes and views to keep; every one when omitted',
  })
  cubes?: string[];
}

export class MetaRequestDto {
  @NestedField(() => MetaSelectorsDto, { description: 'Which model, and which of its cubes and views' })
  selectors: MetaSelectorsDto;
}

export class MetaResponseDto {
  @ApiProperty({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    description:
      "The cubes and views of the deployment's `/v1/meta`, as its data API answers them (name, title, " +
      'measures, dimensions, segments...), in its order',
  })
  cubes: Array<Record<string, unknown>>;
}
