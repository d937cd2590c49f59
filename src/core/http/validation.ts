import { applyDecorators } from '@nestjs/common';
import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsEmail,
  IsIn,
  IsInt,
  IsISO8601,
  IsObject,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';

interface FieldOptions {
  description?: string;
  example?: unknown;
  /** May be absent. */
  optional?: boolean;
  /** May be `null`. */
  nullable?: boolean;
  /** A query-string parameter: convert the string form before validating. */
  query?: boolean;
  deprecated?: boolean;
}

/**
 * Absent and null values skip validation only when the field allows them: the `ValidateIf` every
 * field decorator starts with (settings' own fields use it too).
 */
export function presence(opts: Pick<FieldOptions, 'optional' | 'nullable'>): PropertyDecorator[] {
  const { optional = false, nullable = false } = opts;
  if (optional && nullable) return [ValidateIf((_, v) => v !== undefined && v !== null)];
  if (optional) return [ValidateIf((_, v) => v !== undefined)];
  if (nullable) return [ValidateIf((_, v) => v !== null)];
  return [];
}

function doc(opts: FieldOptions, schema: ApiPropertyOptions): PropertyDecorator {
  const base = {
    description: opts.description,
    example: opts.example,
    required: !opts.optional,
    deprecated: opts.deprecated,
    ...schema,
  } as ApiPropertyOptions;
  if (opts.nullable) (base as { nullable?: boolean }).nullable = true;
  return ApiProperty(base);
}

export function StringField(
  opts: FieldOptions & {
    minLength?: number;
    maxLength?: number;
    pattern?: RegExp;
    patternMessage?: string;
  } = {},
): PropertyDecorator {
  const { minLength, maxLength = 10_000, pattern } = opts;
  return applyDecorators(
    doc(opts, { type: String, minLength, maxLength, pattern: pattern?.source }),
    ...presence(opts),
    IsString(),
    ...(minLength !== undefined ? [MinLength(minLength)] : []),
    MaxLength(maxLength),
    ...(pattern
      ? [Matches(pattern, opts.patternMessage ? { message: opts.patternMessage } : undefined)]
      : []),
  );
}

export function EmailField(opts: FieldOptions = {}): PropertyDecorator {
  return applyDecorators(
    doc(opts, { type: String, format: 'email', maxLength: 320 }),
    ...presence(opts),
    IsString(),
    MaxLength(320),
    IsEmail({}, { message: '$property must be a valid email address' }),
  );
}

export function IntField(opts: FieldOptions & { min?: number; max?: number } = {}): PropertyDecorator {
  const { min = -2147483648, max = 2147483647 } = opts;
  return applyDecorators(
    doc(opts, { type: 'integer', minimum: min, maximum: max }),
    ...(opts.query
      ? [
          Transform(({ value }) =>
            typeof value === 'string' && /^-?\d{1,16}$/.test(value) ? Number(value) : value,
          ),
        ]
      : []),
    ...presence(opts),
    IsInt(),
    Min(min),
    Max(max),
  );
}

export function BoolField(opts: FieldOptions = {}): PropertyDecorator {
  return applyDecorators(
    doc(opts, { type: Boolean }),
    ...(opts.query
      ? [Transform(({ value }) => (value === 'true' ? true : value === 'false' ? false : value))]
      : []),
    ...presence(opts),
    IsBoolean(),
  );
}

export function EnumField<T extends string>(
  values: readonly T[],
  opts: FieldOptions & { enumName?: string } = {},
): PropertyDecorator {
  return applyDecorators(
    doc(opts, { enum: [...values], enumName: opts.enumName, type: String }),
    ...presence(opts),
    IsIn(values as T[], { message: `$property must be one of: ${values.join(', ')}` }),
  );
}

export function DateTimeField(opts: FieldOptions = {}): PropertyDecorator {
  return applyDecorators(
    doc(opts, { type: String, format: 'date-time' }),
    ...presence(opts),
    IsISO8601({ strict: true }, { message: '$property must be an ISO 8601 date-time' }),
  );
}

/** A free-form JSON object. */
export function ObjectField(opts: FieldOptions = {}): PropertyDecorator {
  return applyDecorators(
    doc(opts, { type: 'object', additionalProperties: true }),
    ...presence(opts),
    IsObject({ message: '$property must be an object' }),
  );
}

export function StringArrayField(
  opts: FieldOptions & { maxItems?: number; maxLength?: number; enum?: readonly string[] } = {},
): PropertyDecorator {
  const { maxItems = 1000, maxLength = 1000 } = opts;
  return applyDecorators(
    doc(opts, { type: String, isArray: true, maxItems, ...(opts.enum ? { enum: [...opts.enum] } : {}) }),
    ...presence(opts),
    IsArray(),
    ArrayMaxSize(maxItems),
    IsString({ each: true }),
    MaxLength(maxLength, { each: true }),
    ...(opts.enum
      ? [
          IsIn(opts.enum as string[], {
            each: true,
            message: `each value in $property must be one of: ${opts.enum.join(', ')}`,
          }),
        ]
      : []),
  );
}

/** An array of positive integer ids (32-bit). */
export function IdArrayField(
  opts: FieldOptions & { minItems?: number; maxItems?: number } = {},
): PropertyDecorator {
  const { minItems = 0, maxItems = 1000 } = opts;
  return applyDecorators(
    doc(opts, { type: Number, isArray: true, minItems, maxItems }),
    ...presence(opts),
    IsArray(),
    ArrayMinSize(minItems),
    ArrayMaxSize(maxItems),
    IsInt({ each: true }),
    Min(1, { each: true }),
    Max(2_147_483_647, { each: true }),
  );
}

/** A nested object or array of objects validated by its own class. */
export function NestedField(
  type: () => new () => object,
  opts: FieldOptions & { isArray?: boolean; maxItems?: number } = {},
): PropertyDecorator {
  return applyDecorators(
    // Swagger recognises a lazy type by the function's name, `type`, which this property gives it.
    doc(opts, { type: () => type(), isArray: opts.isArray, maxItems: opts.maxItems }),
    ...presence(opts),
    ...(opts.isArray
      ? [
          IsArray(),
          ArrayMaxSize(opts.maxItems ?? 1000),
          // ValidateNested accepts an array as an element (it validates the inner elements
          // instead), so `[[]]` would reach the service as a list of arrays; each element must be
          // an object of the class.
          IsObject({ each: true, message: 'each value in $property must be an object' }),
        ]
      : [IsObject({ message: '$property must be an object' })]),
    ValidateNested({ each: opts.isArray }),
    Type(type),
  );
}
