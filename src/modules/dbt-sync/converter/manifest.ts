/**
 * Reads a parsed dbt `manifest.json` (the artifact `dbt parse`/`dbt compile` writes to `target/`)
 * as dbt's published manifest JSON schemas v10, v11 and v12 describe it
 * (https://schemas.getdbt.com/dbt/manifest/v12.json; dbt-core `schemas/dbt/manifest/`). Only what
 * the cube converter needs is read, and each field read is checked against the schema's type
 * (with the schema's defaults when absent). Fields not read are not checked, so a manifest of a
 * newer dbt release with more fields under the same schema version is still read.
 *
 * One pass over `nodes`: models and generic tests are collected, then each test is attached to its
 * model through an index by unique id (no lookup per model).
 */

/** Why a manifest was refused; the message names what is wrong and where. */
export class ManifestError extends Error {
  override readonly name = 'ManifestError';
}

const SCHEMA_URL = /^https:\/\/schemas\.getdbt\.com\/dbt\/manifest\/v(\d+)\.json$/;
export const SUPPORTED_SCHEMA_VERSIONS = [10, 11, 12] as const;
export type ManifestSchemaVersion = (typeof SUPPORTED_SCHEMA_VERSIONS)[number];

/** The generic tests that take part in primary-key detection (dbt's built-in `unique`, `not_null`). */
export type KeyTest = 'unique' | 'not_null';
const KEY_TESTS: ReadonlySet<string> = new Set<KeyTest>(['unique', 'not_null']);

export interface DbtColumn {
  name: string;
  /** As written in the model's properties (`data_type`), or null when not declared. */
  dataType: string | null;
  description: string;
  /** `tags`, with v12's `config.tags` added. */
  tags: string[];
  /** v12's `config.meta` overlaid with `meta`. */
  meta: Record<string, unknown>;
  /** A column-level `primary_key` constraint. */
  primaryKeyConstraint: boolean;
  /** The `unique` / `not_null` generic tests on this column. */
  tests: ReadonlySet<KeyTest>;
}

export interface DbtModel {
  uniqueId: string;
  name: string;
  packageName: string;
  /** A versioned model's `version` (dbt 1.5+), else null. */
  version: string | number | null;
  relationName: string | null;
  database: string | null;
  schema: string;
  alias: string;
  description: string;
  materialized: string;
  tags: string[];
  /** In the manifest's order (the order of the model's properties file). */
  columns: DbtColumn[];
  /** The columns of model-level `primary_key` constraints, in order. */
  primaryKeyConstraintColumns: string[];
}

export interface DbtManifest {
  schemaVersion: ManifestSchemaVersion;
  dbtVersion: string | null;
  generatedAt: string | null;
  /** The models that become cubes (enabled, not ephemeral), sorted by unique id. */
  models: DbtModel[];
  /** Unique ids of the models left out, sorted. */
  skipped: { ephemeral: string[]; disabled: string[] };
  stats: {
    /** Every node of resource type `model` in `nodes` (ephemeral ones included). */
    models: number;
    sources: number;
    macros: number;
  };
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function fail(where: string, expected: string, value: unknown): never {
  throw new ManifestError(
    value === undefined
      ? `${where} is missing: it must be ${expected}`
      : `${where} must be ${expected}, not ${describe(value)}`,
  );
}

const at = (base: string, key: string): string => `${base}[${JSON.stringify(key)}]`;

function object(value: unknown, where: string): Json {
  return isObject(value) ? value : fail(where, 'an object', value);
}

function string(value: unknown, where: string): string {
  return typeof value === 'string' ? value : fail(where, 'a string', value);
}

/** A field the schema types as string or null, with a default when absent. */
function nullableString(value: unknown, where: string): string | null {
  if (value === undefined || value === null) return null;
  return typeof value === 'string' ? value : fail(where, 'a string or null', value);
}

function optionalString(value: unknown, where: string, fallback: string): string {
  return value === undefined ? fallback : string(value, where);
}

function optionalObject(value: unknown, where: string): Json {
  return value === undefined ? {} : object(value, where);
}

function requiredStringArray(value: unknown, where: string): string[] {
  if (!Array.isArray(value)) fail(where, 'an array of strings', value);
  return value.map((item, i) => string(item, `${where}[${i}]`));
}

/** An array of strings the schema defaults to `[]`. */
/** The deepest nesting read in a `meta` (written back into YAML, so bounded). */
const MAX_META_DEPTH = 32;

/** A `meta` object: free-form in the schema, so checked to hold JSON values only. */
function metaObject(value: unknown, where: string): Json {
  if (value === undefined) return {};
  const check = (v: unknown, path: string, depth: number): void => {
    if (v === null || typeof v === 'string' || typeof v === 'boolean') return;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) fail(path, 'a finite number', v);
      return;
    }
    if (typeof v !== 'object') fail(path, 'a JSON value', v);
    if (depth >= MAX_META_DEPTH)
      throw new ManifestError(`${path} is nested deeper than ${MAX_META_DEPTH} levels`);
    if (Array.isArray(v)) v.forEach((item, i) => check(item, `${path}[${i}]`, depth + 1));
    else for (const [k, item] of Object.entries(v)) check(item, at(path, k), depth + 1);
  };
  const meta = object(value, where);
  check(meta, where, 0);
  return meta;
}

function stringArray(value: unknown, where: string): string[] {
  return value === undefined ? [] : requiredStringArray(value, where);
}

/** `config.tags`: the schema allows one string or an array of them. */
function configTags(value: unknown, where: string): string[] {
  return typeof value === 'string' ? [value] : stringArray(value, where);
}

/** A model's `version` (dbt 1.5+ versioned models): string, number or null. */
function modelVersion(value: unknown, where: string): string | number | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string' || typeof value === 'number') return value;
  return fail(where, 'a string, a number or null', value);
}

function optionalBoolean(value: unknown, where: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  return typeof value === 'boolean' ? value : fail(where, 'a boolean', value);
}

function schemaVersion(metadata: Json): ManifestSchemaVersion {
  const url = string(metadata.dbt_schema_version, 'metadata.dbt_schema_version');
  const version = Number(SCHEMA_URL.exec(url)?.[1]);
  const supported = SUPPORTED_SCHEMA_VERSIONS.find((v) => v === version);
  if (supported === undefined) {
    throw new ManifestError(
      `metadata.dbt_schema_version ${JSON.stringify(url)} is not supported: ` +
        'expected https://schemas.getdbt.com/dbt/manifest/v10.json, v11.json or v12.json (dbt 1.6 and later)',
    );
  }
  return supported;
}

/** The fields every node of the v10-v12 schemas requires, beyond those read below. */
function requireNodeFields(node: Json, where: string, version: ManifestSchemaVersion): void {
  for (const field of ['package_name', 'path', 'original_file_path', 'schema', 'alias']) {
    string(node[field], `${where}.${field}`);
  }
  requiredStringArray(node.fqn, `${where}.fqn`);
  object(node.checksum, `${where}.checksum`);
  // `database` is required (nullable) from v11; v10 gives it a default.
  if (version >= 11 && !('database' in node)) fail(`${where}.database`, 'a string or null', undefined);
  nullableString(node.database, `${where}.database`);
}

function readColumn(raw: unknown, where: string): Omit<DbtColumn, 'tests'> {
  const column = object(raw, where);
  const config = optionalObject(column.config, `${where}.config`);
  const constraints = column.constraints === undefined ? [] : column.constraints;
  if (!Array.isArray(constraints)) fail(`${where}.constraints`, 'an array', constraints);
  let primaryKeyConstraint = false;
  constraints.forEach((c, i) => {
    const constraint = object(c, `${where}.constraints[${i}]`);
    if (string(constraint.type, `${where}.constraints[${i}].type`) === 'primary_key') {
      primaryKeyConstraint = true;
    }
  });
  const tags = [
    ...stringArray(column.tags, `${where}.tags`),
    ...stringArray(config.tags, `${where}.config.tags`),
  ];
  return {
    name: string(column.name, `${where}.name`),
    dataType: nullableString(column.data_type, `${where}.data_type`),
    description: optionalString(column.description, `${where}.description`, ''),
    tags: [...new Set(tags)],
    meta: {
      ...metaObject(config.meta, `${where}.config.meta`),
      ...metaObject(column.meta, `${where}.meta`),
    },
    primaryKeyConstraint,
  };
}

interface ModelDraft extends Omit<DbtModel, 'columns'> {
  enabled: boolean;
  columns: Omit<DbtColumn, 'tests'>[];
}

function readModel(node: Json, where: string, version: ManifestSchemaVersion): ModelDraft {
  requireNodeFields(node, where, version);
  const config = optionalObject(node.config, `${where}.config`);
  const columnsRaw = node.columns === undefined ? {} : object(node.columns, `${where}.columns`);
  const columns = Object.entries(columnsRaw).map(([key, c]) => readColumn(c, at(`${where}.columns`, key)));

  const constraints = node.constraints === undefined ? [] : node.constraints;
  if (!Array.isArray(constraints)) fail(`${where}.constraints`, 'an array', constraints);
  const primaryKeyConstraintColumns: string[] = [];
  constraints.forEach((c, i) => {
    const constraint = object(c, `${where}.constraints[${i}]`);
    const type = string(constraint.type, `${where}.constraints[${i}].type`);
    const cols = stringArray(constraint.columns, `${where}.constraints[${i}].columns`);
    if (type === 'primary_key') primaryKeyConstraintColumns.push(...cols);
  });

  return {
    uniqueId: string(node.unique_id, `${where}.unique_id`),
    name: string(node.name, `${where}.name`),
    packageName: string(node.package_name, `${where}.package_name`),
    version: modelVersion(node.version, `${where}.version`),
    relationName: nullableString(node.relation_name, `${where}.relation_name`),
    database: nullableString(node.database, `${where}.database`),
    schema: string(node.schema, `${where}.schema`),
    alias: string(node.alias, `${where}.alias`),
    description: optionalString(node.description, `${where}.description`, ''),
    materialized: optionalString(config.materialized, `${where}.config.materialized`, 'view'),
    enabled: optionalBoolean(config.enabled, `${where}.config.enabled`, true),
    tags: [
      ...new Set([
        ...stringArray(node.tags, `${where}.tags`),
        ...configTags(config.tags, `${where}.config.tags`),
      ]),
    ],
    columns,
    primaryKeyConstraintColumns,
  };
}

interface TestLink {
  test: KeyTest;
  /** The model unique ids it is attached to. */
  models: string[];
  column: string;
}

/**
 * A generic test (one with `test_metadata`) that is `unique` or `not_null` on one column, with the
 * models it tests: `attached_node` (v10+), else the `model.` entries of `depends_on.nodes`. The
 * column is the node's `column_name` (v10+), else `test_metadata.kwargs.column_name`.
 */
function readTest(node: Json, where: string, version: ManifestSchemaVersion): TestLink | null {
  if (node.test_metadata === undefined) return null; // a singular (SQL file) test
  requireNodeFields(node, where, version);
  const metadata = object(node.test_metadata, `${where}.test_metadata`);
  // `name` is required up to v11; v12 gives it the default "test".
  const name =
    version >= 12 && metadata.name === undefined
      ? 'test'
      : string(metadata.name, `${where}.test_metadata.name`);
  const kwargs = optionalObject(metadata.kwargs, `${where}.test_metadata.kwargs`);
  const config = optionalObject(node.config, `${where}.config`);
  const attached = nullableString(node.attached_node, `${where}.attached_node`);
  const dependsOn = optionalObject(node.depends_on, `${where}.depends_on`);
  const dependencies = stringArray(dependsOn.nodes, `${where}.depends_on.nodes`);
  const columnName = nullableString(node.column_name, `${where}.column_name`);
  const enabled = optionalBoolean(config.enabled, `${where}.config.enabled`, true);
  if (!KEY_TESTS.has(name) || !enabled) return null;
  // kwargs are free-form (macro arguments); a column_name that is not a string names no column.
  const column = columnName ?? (typeof kwargs.column_name === 'string' ? kwargs.column_name : null);
  if (column === null) return null;
  const models = attached !== null ? [attached] : dependencies.filter((id) => id.startsWith('model.'));
  return { test: name as KeyTest, models, column };
}

/** Reads and checks a parsed manifest; throws {@link ManifestError} when it is not one we read. */
export function readManifest(input: unknown): DbtManifest {
  if (!isObject(input)) fail('the manifest', 'a JSON object', input);
  const metadata = object(input.metadata, 'metadata');
  const version = schemaVersion(metadata);
  const dbtVersion = nullableString(metadata.dbt_version, 'metadata.dbt_version');
  const generatedAt = nullableString(metadata.generated_at, 'metadata.generated_at');
  const nodes = object(input.nodes, 'nodes');
  const sources = object(input.sources, 'sources');
  const macros = object(input.macros, 'macros');

  const drafts = new Map<string, ModelDraft>();
  const tests: TestLink[] = [];
  let modelCount = 0;
  for (const [key, raw] of Object.entries(nodes)) {
    const where = at('nodes', key);
    const node = object(raw, where);
    const type = string(node.resource_type, `${where}.resource_type`);
    if (type === 'model') {
      modelCount += 1;
      const model = readModel(node, where, version);
      if (drafts.has(model.uniqueId)) {
        throw new ManifestError(`${where}.unique_id ${JSON.stringify(model.uniqueId)} is used by two nodes`);
      }
      drafts.set(model.uniqueId, model);
    } else if (type === 'test') {
      const link = readTest(node, where, version);
      if (link) tests.push(link);
    }
  }

  // column name -> tests, per model unique id
  const testsByModel = new Map<string, Map<string, Set<KeyTest>>>();
  for (const link of tests) {
    for (const modelId of link.models) {
      if (!drafts.has(modelId)) continue;
      let byColumn = testsByModel.get(modelId);
      if (!byColumn) testsByModel.set(modelId, (byColumn = new Map()));
      let set = byColumn.get(link.column);
      if (!set) byColumn.set(link.column, (set = new Set()));
      set.add(link.test);
    }
  }

  const models: DbtModel[] = [];
  const skipped: DbtManifest['skipped'] = { ephemeral: [], disabled: [] };
  const none: ReadonlySet<KeyTest> = new Set();
  for (const draft of drafts.values()) {
    if (!draft.enabled) skipped.disabled.push(draft.uniqueId);
    else if (draft.materialized === 'ephemeral') skipped.ephemeral.push(draft.uniqueId);
    else {
      const { enabled: _enabled, columns, ...rest } = draft;
      const byColumn = testsByModel.get(draft.uniqueId);
      models.push({ ...rest, columns: columns.map((c) => ({ ...c, tests: byColumn?.get(c.name) ?? none })) });
    }
  }
  const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  models.sort((a, b) => byId(a.uniqueId, b.uniqueId));
  skipped.ephemeral.sort(byId);
  skipped.disabled.sort(byId);

  return {
    schemaVersion: version,
    dbtVersion,
    generatedAt,
    models,
    skipped,
    stats: { models: modelCount, sources: Object.keys(sources).length, macros: Object.keys(macros).length },
  };
}

/** A read manifest as JSON text: what a posted manifest is stored as until its sync runs. */
export function manifestToJson(manifest: DbtManifest): string {
  return JSON.stringify(manifest, (_key, value: unknown) =>
    value instanceof Set ? [...(value as Set<unknown>)] : value,
  );
}

/**
 * A manifest {@link manifestToJson} wrote, back as it was read. The text is this service's own
 * (checked by {@link readManifest} before it was stored), so it is not checked again.
 */
export function manifestFromJson(text: string): DbtManifest {
  const manifest = JSON.parse(text) as DbtManifest;
  for (const model of manifest.models) {
    for (const column of model.columns) column.tests = new Set(column.tests);
  }
  return manifest;
}
