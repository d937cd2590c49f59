/**
 * The rules that turn one dbt model into one cube, written from those of Cube's open-source
 * `cube_dbt` package (github.com/cube-js/cube_dbt, MIT; 0.6.3): `Model.sql_table`,
 * `Model._detect_primary_key`, `Column.type` and its type maps, `Column._as_dimension`. Where
 * this code departs from cube_dbt it says so; the user docs ("How models become cubes") list
 * the departures.
 */
import type { DbtColumn, DbtModel } from './manifest.js';

export type CubeDimensionType = 'string' | 'number' | 'time' | 'boolean' | 'geo';

/** Cube's dimension types (cube_dbt `VALID_DIMENSION_TYPES`). */
const DIMENSION_TYPES: ReadonlySet<string> = new Set<CubeDimensionType>([
  'string',
  'number',
  'time',
  'boolean',
  'geo',
]);

/**
 * Warehouse type -> Cube type: cube_dbt's BigQuery, Redshift and Snowflake maps merged as cube_dbt
 * merges them (Snowflake over Redshift over BigQuery): so `geography` is `geo` (BigQuery,
 * Snowflake; Redshift says string) and `geometry` is `string` (Snowflake; Redshift says geo).
 * A type that already is a Cube type (`string`, `number`, `boolean`, `time`) maps to itself.
 */
const WAREHOUSE_TYPES: Record<CubeDimensionType, readonly string[]> = {
  number: [
    'bigdecimal',
    'bigint',
    'bignumeric',
    'byteint',
    'dec',
    'decimal',
    'double',
    'double precision',
    'float',
    'float4',
    'float64',
    'float8',
    'int',
    'int2',
    'int4',
    'int64',
    'int8',
    'integer',
    'numeric',
    'real',
    'smallint',
    'tinyint',
  ],
  string: [
    'array',
    'binary',
    'binary varying',
    'bpchar',
    'bytes',
    'char',
    'char varying',
    'character',
    'character varying',
    'geometry',
    'hllsketch',
    'interval',
    'interval day to second',
    'interval year to month',
    'json',
    'nchar',
    'nchar varying',
    'nvarchar',
    'nvarchar2',
    'object',
    'range',
    'struct',
    'super',
    'text',
    'varbinary',
    'varbyte',
    'varchar',
    'variant',
    'vector',
  ],
  time: [
    'date',
    'datetime',
    'time with time zone',
    'time without time zone',
    'timestamp',
    'timestamp with time zone',
    'timestamp without time zone',
    'timestamp_ltz',
    'timestamp_ntz',
    'timestamp_tz',
    'timestamptz',
    'timetz',
  ],
  boolean: ['bool'],
  geo: ['geography'],
};

const CUBE_TYPE_OF = new Map<string, CubeDimensionType>(
  Object.entries(WAREHOUSE_TYPES).flatMap(([cubeType, types]) =>
    types.map((t) => [t, cubeType as CubeDimensionType] as const),
  ),
);

/**
 * The Cube type of a column's `data_type` (cube_dbt `Column.type`): no type is `string`; otherwise
 * lower-cased, with `(...)` parameters and `<...>` element types removed (`NUMERIC(38,0)`,
 * `ARRAY<STRUCT<...>>`), then mapped. Unlike cube_dbt, surrounding spaces are trimmed, and an
 * unknown type gives null (cube_dbt raises, failing the whole render; we leave the column out).
 */
export function cubeDimensionType(dataType: string | null): CubeDimensionType | null {
  if (dataType === null) return 'string';
  const normalised = dataType
    .toLowerCase()
    .replace(/\([^)]*\)/g, '')
    .replace(/<.*>/g, '')
    .trim();
  const mapped = CUBE_TYPE_OF.get(normalised) ?? normalised;
  return DIMENSION_TYPES.has(mapped) ? (mapped as CubeDimensionType) : null;
}

/**
 * The table a cube reads (cube_dbt `Model.sql_table`): the model's `relation_name`, already quoted
 * by dbt's adapter; without one, `` `database`.`schema`.`alias` `` quoted as cube_dbt quotes it
 * (backticks), leaving out a null database (cube_dbt would write `None`).
 */
export function sqlTable(model: DbtModel): string {
  if (model.relationName) return model.relationName;
  return [model.database, model.schema, model.alias]
    .filter((part): part is string => part !== null)
    .map((part) => `\`${part}\``)
    .join('.');
}

export type PrimaryKeyRule = 'constraint' | 'tag' | 'tests';

export interface PrimaryKey {
  /** The primary-key columns, in the model's column order; empty when no rule applies. */
  columns: string[];
  rule: PrimaryKeyRule | null;
  /** Constraint columns the model does not document (they cannot become dimensions). */
  undocumented: string[];
}

const hasPrimaryKeyTag = (c: DbtColumn) => c.tags.includes('primary_key');
const hasKeyTests = (c: DbtColumn) => c.tests.has('unique') && c.tests.has('not_null');

/**
 * The primary key (cube_dbt `Model._detect_primary_key`), first rule that finds one:
 * 1. `primary_key` constraints: model-level ones (cube_dbt) and column-level ones (our addition);
 *    when there are any, they alone decide, as in cube_dbt;
 * 2. columns tagged `primary_key`;
 * 3. columns with both a `unique` and a `not_null` test.
 * cube_dbt applies 2 and 3 together (a column is a key if tagged or tested); we let a tag win over
 * tests, so a model with a tagged key and a tested natural key gets the tagged one only.
 */
export function primaryKey(model: DbtModel): PrimaryKey {
  const constrained = new Set(model.primaryKeyConstraintColumns);
  for (const column of model.columns) if (column.primaryKeyConstraint) constrained.add(column.name);
  if (constrained.size > 0) {
    const documented = new Set(model.columns.map((c) => c.name));
    return {
      columns: model.columns.filter((c) => constrained.has(c.name)).map((c) => c.name),
      rule: 'constraint',
      undocumented: [...constrained].filter((name) => !documented.has(name)),
    };
  }
  for (const [rule, applies] of [
    ['tag', hasPrimaryKeyTag],
    ['tests', hasKeyTests],
  ] as const) {
    const columns = model.columns.filter(applies).map((c) => c.name);
    if (columns.length > 0) return { columns, rule, undocumented: [] };
  }
  return { columns: [], rule: null, undocumented: [] };
}

/** Cube's rule for cube and member names (CubeValidator `identifierRegex`). */
const CUBE_IDENTIFIER = /^[_a-zA-Z][_a-zA-Z0-9]*$/;

export function isCubeIdentifier(name: string): boolean {
  return CUBE_IDENTIFIER.test(name);
}

export interface CubeDimension {
  name: string;
  description?: string;
  sql: string;
  type: CubeDimensionType;
  primary_key?: true;
  meta?: Record<string, unknown>;
}

export interface CubeMeasure {
  name: string;
  type: 'count';
}

export interface CubeDefinition {
  name: string;
  description?: string;
  sql_table: string;
  dimensions: CubeDimension[];
  measures: CubeMeasure[];
}

export interface ConversionWarning {
  /** The model's unique id. */
  model: string;
  column?: string;
  message: string;
}

/** The count measure's name: `count`, unless a column already took it. */
function countMeasureName(dimensions: CubeDimension[]): string {
  const taken = new Set(dimensions.map((d) => d.name));
  if (!taken.has('count')) return 'count';
  if (!taken.has('row_count')) return 'row_count';
  let n = 1;
  while (taken.has(`count_${n}`)) n += 1;
  return `count_${n}`;
}

/**
 * One model as one cube (cube_dbt `Model._as_cube` and `_as_dimensions`, plus a `count` measure,
 * which cube_dbt leaves to the template). Keys in cube_dbt's order; empty descriptions and metas
 * left out as cube_dbt does. A column whose name is not a Cube identifier is left out (cube_dbt
 * would write an invalid member), and so is one whose type is unknown (cube_dbt raises). Unlike
 * cube_dbt, `primary_key: true` also marks a key found by a constraint (cube_dbt marks only tagged
 * or tested columns in the dimensions it writes, though its `primary_key` reports constraints).
 */
export function modelToCube(
  model: DbtModel,
  cubeName: string,
): { cube: CubeDefinition; warnings: ConversionWarning[] } {
  const warnings: ConversionWarning[] = [];
  const warn = (message: string, column?: string) =>
    warnings.push(
      column === undefined ? { model: model.uniqueId, message } : { model: model.uniqueId, column, message },
    );
  const key = primaryKey(model);
  const keyColumns = new Set(key.columns);
  for (const name of key.undocumented) {
    warn(`primary key column ${JSON.stringify(name)} of a constraint is not among the model's columns`, name);
  }

  const dimensions: CubeDimension[] = [];
  for (const column of model.columns) {
    if (!isCubeIdentifier(column.name)) {
      warn('left out: the column name is not a Cube member name (letters, digits, _)', column.name);
      continue;
    }
    const type = cubeDimensionType(column.dataType);
    if (type === null) {
      warn(`left out: unknown data_type ${JSON.stringify(column.dataType)}`, column.name);
      continue;
    }
    // cube_dbt's key order: name, description, sql, type, primary_key, meta.
    dimensions.push({
      name: column.name,
      ...(column.description ? { description: column.description } : {}),
      sql: column.name,
      type,
      ...(keyColumns.has(column.name) ? { primary_key: true as const } : {}),
      ...(Object.keys(column.meta).length > 0 ? { meta: column.meta } : {}),
    });
  }
  if (key.columns.length > 0 && !dimensions.some((d) => d.primary_key)) {
    warn('the cube has no primary key: its key columns were left out');
  }

  const cube: CubeDefinition = {
    name: cubeName,
    ...(model.description ? { description: model.description } : {}),
    sql_table: sqlTable(model),
    dimensions,
    measures: [{ name: countMeasureName(dimensions), type: 'count' }],
  };
  return { cube, warnings };
}
