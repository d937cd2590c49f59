import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

/**
 * Checks a manifest as the Kubernetes API server would before storing it: against Kubernetes' own
 * schema for its kind (test/fixtures/kubernetes/schemas.json, extracted from the v1.35.0 OpenAPI
 * document; README.md there), refusing unknown fields as `fieldValidation=Strict` does, then the
 * rules the API server's validation adds on top of the schema (names, labels, selectors, ports...).
 *
 * ```ts
 * expect(validateManifest(deployment)).toEqual([]);
 * ```
 *
 * How the schema is read, as the API server decodes JSON:
 *
 * - an object with declared `properties` accepts no other field (`field not declared in schema`);
 * - `null` for a field is the field left out (`creationTimestamp: null`, as `kubectl create
 *   --dry-run -o yaml` writes); a `null` list item is refused;
 * - int-or-string fields (`targetPort`, `maxSurge`) take an integer or a string, and a
 *   `resource.Quantity` a number or a string of the API server's quantity syntax;
 * - formats: `int32` and `int64` ranges, `byte` (base64: a Secret's `data`), `date-time` (RFC 3339);
 * - `x-kubernetes-list-type: map` lists refuse two items with the same keys (two containers or
 *   two env vars of one name), `set` lists a repeated value.
 *
 * The rules added on top, with the API server's messages (Kubernetes' `ValidateObjectMeta` and
 * the kinds' own validation; only the ones listed are checked):
 *
 * - `metadata.name` (or `generateName`) is required, and is a DNS-1123 subdomain (253 characters),
 *   except: Namespace and StatefulSet a DNS-1123 label (63), Service a DNS-1035 label (63, starts
 *   with a letter), Role and RoleBinding a path segment (not `.` or `..`, no `/` or `%`);
 * - `metadata.namespace` a DNS-1123 label; label keys qualified names (`prefix/name`, name 63
 *   characters of `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, prefix a DNS subdomain), label values
 *   63 characters of `(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?`; annotation keys qualified
 *   names, annotations 256 KiB in all (the same for a pod template's);
 * - label selectors (`matchLabels`, `matchExpressions` operators and values);
 * - Deployment and StatefulSet: a non-empty selector matching the pod template's labels,
 *   non-negative `replicas`, `progressDeadlineSeconds` greater than `minReadySeconds`;
 * - pod templates: container and volume names DNS-1123 labels, unique; port names IANA service
 *   names (15 characters, a letter, no `--`); a volume mount naming a volume the pod has;
 * - Service: ports 1-65535, named (DNS-1123 labels, unique) when there are several, a target port
 *   a port number or an IANA service name;
 * - Secret and ConfigMap keys (`[-._a-zA-Z0-9]+`, 253 characters), data 1 MiB in all;
 * - NetworkPolicy peers (one of pod/namespace selector or `ipBlock`, not `ipBlock` with another),
 *   CIDRs in canonical subnet form and `except` a strict subset of `cidr`, ports and protocols,
 *   `policyTypes` among `Ingress`/`Egress`.
 */

export const KUBERNETES_FIXTURES = path.join(process.cwd(), 'test/fixtures/kubernetes');

/** One problem, as the API server lists it in a 422 `Status`'s `details.causes`. */
export interface ManifestProblem {
  /** The field's path as Kubernetes writes it: `spec.template.spec.containers[0].name`. */
  field: string;
  reason:
    | 'FieldValueInvalid'
    | 'FieldValueRequired'
    | 'FieldValueDuplicate'
    | 'FieldValueNotSupported'
    | 'FieldValueNotFound'
    | 'FieldValueForbidden'
    | 'FieldValueTooLong'
    | 'FieldValueTypeInvalid';
  /** The problem without its field: `Invalid value: "x": must be ...`, `Required value`. */
  message: string;
}

type Json = Record<string, unknown>;

interface Fixture {
  kinds: Record<string, string>;
  definitions: Record<string, Json>;
}

const QUANTITY = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';
const QUANTITY_DEFINITION = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
const LIST_MAP_KEYS = 'x-kubernetes-list-map-keys';

/** A definition of the fixture as a JSON Schema Ajv can compile (see the file's comment). */
function toJsonSchema(schema: Json): Json {
  if (typeof schema.$ref === 'string') return { $ref: schema.$ref };
  if (schema.format === 'int-or-string') return { type: ['integer', 'string'] };
  const out: Json = {};
  if (schema.type !== undefined) out.type = schema.type;
  if (typeof schema.format === 'string') out.format = schema.format;
  if (schema.properties) {
    out.properties = Object.fromEntries(
      Object.entries(schema.properties as Record<string, Json>).map(([k, v]) => [k, toJsonSchema(v)]),
    );
  }
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
    out.additionalProperties = toJsonSchema(schema.additionalProperties as Json);
  } else if (schema.properties) {
    out.additionalProperties = false;
  }
  if (schema.items) out.items = toJsonSchema(schema.items as Json);
  if (Array.isArray(schema.required)) out.required = schema.required;
  if (schema['x-kubernetes-list-type'] === 'set') out.uniqueItems = true;
  if (schema['x-kubernetes-list-type'] === 'map' && Array.isArray(schema[LIST_MAP_KEYS])) {
    out[LIST_MAP_KEYS] = schema[LIST_MAP_KEYS];
  }
  return out;
}

const keyOf = (item: unknown, keys: string[]) =>
  JSON.stringify(keys.map((k) => (item as Json | null)?.[k] ?? null));

let compiled: {
  kinds: Record<string, string>;
  definitions: Record<string, Json>;
  validator(kind: string): ValidateFunction | undefined;
} | null = null;

/** Ajv and one validator per kind, compiled once on first use. */
function schemas() {
  if (compiled) return compiled;
  const fixture = JSON.parse(
    fs.readFileSync(path.join(KUBERNETES_FIXTURES, 'schemas.json'), 'utf8'),
  ) as Fixture;
  const definitions: Record<string, Json> = {};
  for (const [name, schema] of Object.entries(fixture.definitions)) {
    definitions[name] =
      name === QUANTITY_DEFINITION ? { type: ['string', 'number'], pattern: QUANTITY } : toJsonSchema(schema);
  }
  const ajv = new Ajv({ allErrors: true, verbose: true, allowUnionTypes: true, strict: true });
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => n >= -(2 ** 31) && n < 2 ** 31 });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
  ajv.addFormat('double', { type: 'number', validate: (n: number) => Number.isFinite(n) });
  ajv.addFormat('byte', /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/);
  ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/);
  ajv.addKeyword({
    keyword: LIST_MAP_KEYS,
    type: 'array',
    schemaType: 'array',
    validate: (keys: string[], data: unknown[]) =>
      new Set(data.map((item) => keyOf(item, keys))).size === data.length,
  });
  ajv.addSchema({ $id: 'k8s', definitions });
  const validators = new Map<string, ValidateFunction>();
  compiled = {
    kinds: fixture.kinds,
    definitions: fixture.definitions,
    /** The kind's validator, compiled on first use (a pod template's schema takes a while). */
    validator(kind: string) {
      const name = fixture.kinds[kind];
      if (!name) return undefined;
      if (!validators.has(kind)) validators.set(kind, ajv.compile({ $ref: `k8s#/definitions/${name}` }));
      return validators.get(kind);
    },
  };
  return compiled;
}

/** The kinds checked, as `apiVersion/kind`: `apps/v1/Deployment`, `v1/Service`... */
export function manifestKinds(): string[] {
  return Object.keys(schemas().kinds);
}

/**
 * Whether the field at `path` of an object of `kind` (`apps/v1/Deployment`) is an atomic map or
 * struct in Kubernetes' schema (`x-kubernetes-map-type: atomic`: a label selector, a Service's
 * `selector`, a `secretKeyRef`), which server-side apply owns and replaces whole.
 */
export function isAtomicMap(kind: string, path: string[]): boolean {
  const { kinds, definitions } = schemas();
  const resolve = (schema: Json | undefined): Json | undefined =>
    typeof schema?.$ref === 'string' ? definitions[schema.$ref.replace('#/definitions/', '')] : schema;
  let schema = resolve(kinds[kind] ? { $ref: `#/definitions/${kinds[kind]}` } : undefined);
  for (const field of path) {
    if (!schema) return false;
    const next =
      (schema.properties as Record<string, Json> | undefined)?.[field] ??
      (schema.additionalProperties as Json | undefined);
    if (next?.['x-kubernetes-map-type'] === 'atomic') return true;
    schema = resolve(next);
  }
  return schema?.['x-kubernetes-map-type'] === 'atomic';
}

/** A copy of `value` without the object fields set to `null` (the API server reads them as absent). */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== null)
        .map(([k, v]) => [k, withoutNulls(v)]),
    );
  }
  return value;
}

const isObject = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);
const shown = (v: unknown) => JSON.stringify(v) ?? 'null';

/** Kubernetes' path syntax: `.name` for a field, `[i]` for an item, `[key]` for a map's key. */
function child(base: string, key: string | number): string {
  if (typeof key === 'number') return `${base}[${key}]`;
  if (/^[A-Za-z_$][\w$]*$/.test(key)) return base ? `${base}.${key}` : key;
  return `${base}[${key}]`;
}

/** `/spec/template/0` (JSON pointer into `data`) as `spec.template[0]`. */
function fieldOf(pointer: string, data: unknown): string {
  let field = '';
  let node = data;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) {
      field = child(field, Number(key));
      node = node[Number(key)];
    } else {
      field = child(field, key);
      node = isObject(node) ? node[key] : undefined;
    }
  }
  return field;
}

function schemaProblem(e: ErrorObject, data: unknown): ManifestProblem {
  const at = fieldOf(e.instancePath, data);
  const value = `Invalid value: ${shown(e.data)}`;
  switch (e.keyword) {
    case 'required':
      return {
        field: child(at, (e.params as { missingProperty: string }).missingProperty),
        reason: 'FieldValueRequired',
        message: 'Required value',
      };
    case 'additionalProperties':
      return {
        field: child(at, (e.params as { additionalProperty: string }).additionalProperty),
        reason: 'FieldValueInvalid',
        message: 'field not declared in schema',
      };
    case 'type': {
      const type = (e.params as { type: string | string[] }).type;
      return {
        field: at,
        reason: 'FieldValueTypeInvalid',
        message: `${value}: must be of type ${Array.isArray(type) ? type.join(' or ') : type}`,
      };
    }
    case 'format': {
      const format = (e.params as { format: string }).format;
      const detail: Record<string, string> = {
        int32: 'must be a 32-bit integer',
        int64: 'must be a 64-bit integer',
        double: 'must be a finite number',
        byte: 'must be a base64-encoded string',
        'date-time': 'must be an RFC 3339 date-time',
      };
      return { field: at, reason: 'FieldValueInvalid', message: `${value}: ${detail[format] ?? format}` };
    }
    case 'pattern':
      return {
        field: at,
        reason: 'FieldValueInvalid',
        message: `${value}: quantities must match the regular expression '${QUANTITY}'`,
      };
    case 'uniqueItems': {
      const { j } = e.params as { i: number; j: number };
      return {
        field: child(at, j),
        reason: 'FieldValueDuplicate',
        message: `Duplicate value: ${shown((e.data as unknown[])[j])}`,
      };
    }
    case LIST_MAP_KEYS: {
      const keys = e.schema as string[];
      const items = e.data as unknown[];
      const seen = new Set<string>();
      const index = items.findIndex((item) => {
        const k = keyOf(item, keys);
        return seen.has(k) || !seen.add(k);
      });
      const item = items[index] as Json;
      const duplicate = Object.fromEntries(keys.filter((k) => k in item).map((k) => [k, item[k]]));
      return {
        field: child(at, index),
        reason: 'FieldValueDuplicate',
        message: `Duplicate value: ${shown(duplicate)}`,
      };
    }
    default:
      return { field: at, reason: 'FieldValueInvalid', message: `${value}: ${e.message ?? e.keyword}` };
  }
}

// --- The API server's rules on top of the schema (k8s.io/apimachinery/pkg/util/validation) ---

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;

function dns1123Label(v: string): string[] {
  const out: string[] = [];
  if (v.length > 63) out.push('must be no more than 63 characters');
  if (!DNS1123_LABEL.test(v)) {
    out.push(
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    );
  }
  return out;
}

function dns1123Subdomain(v: string): string[] {
  const out: string[] = [];
  if (v.length > 253) out.push('must be no more than 253 characters');
  if (!DNS1123_SUBDOMAIN.test(v)) {
    out.push(
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    );
  }
  return out;
}

function dns1035Label(v: string): string[] {
  const out: string[] = [];
  if (v.length > 63) out.push('must be no more than 63 characters');
  if (!DNS1035_LABEL.test(v)) {
    out.push(
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    );
  }
  return out;
}

function pathSegmentName(v: string): string[] {
  if (v === '.' || v === '..') return [`may not be '${v}'`];
  const bad = ['/', '%'].find((c) => v.includes(c));
  return bad ? [`may not contain '${bad}'`] : [];
}

function qualifiedName(v: string): string[] {
  const parts = v.split('/');
  let name = v;
  const out: string[] = [];
  if (parts.length === 2) {
    const [prefix] = parts;
    name = parts[1];
    if (prefix.length === 0) out.push('prefix part must be non-empty');
    else out.push(...dns1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else if (parts.length > 2) {
    return [
      "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) out.push('name part must be non-empty');
  else if (name.length > 63) out.push('name part must be no more than 63 characters');
  if (name.length > 0 && !QUALIFIED_NAME.test(name)) {
    out.push(
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    );
  }
  return out;
}

function labelValue(v: string): string[] {
  const out: string[] = [];
  if (v.length > 63) out.push('must be no more than 63 characters');
  if (!LABEL_VALUE.test(v)) {
    out.push(
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    );
  }
  return out;
}

/** An IANA service name, the syntax of a named port. */
function portName(v: string): string[] {
  const out: string[] = [];
  if (v.length > 15) out.push('must be no more than 15 characters');
  if (!/^[-a-z0-9]+$/.test(v))
    out.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (v.includes('--')) out.push("must not contain consecutive hyphens ('--')");
  if (/^-|-$/.test(v)) out.push("must not begin or end with a hyphen ('-')");
  if (!/[a-z]/.test(v)) out.push('must contain at least one letter (a-z)');
  return out;
}

const isPort = (n: unknown) => typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 65535;
const PORT_RANGE = 'must be between 1 and 65535, inclusive';

/** Collects problems with Kubernetes' field-error wording. */
class Problems {
  readonly list: ManifestProblem[] = [];
  invalid(field: string, value: unknown, detail: string) {
    this.list.push({
      field,
      reason: 'FieldValueInvalid',
      message: `Invalid value: ${shown(value)}: ${detail}`,
    });
  }
  required(field: string, detail = '') {
    this.list.push({
      field,
      reason: 'FieldValueRequired',
      message: `Required value${detail ? `: ${detail}` : ''}`,
    });
  }
  duplicate(field: string, value: unknown) {
    this.list.push({ field, reason: 'FieldValueDuplicate', message: `Duplicate value: ${shown(value)}` });
  }
  notSupported(field: string, value: unknown, supported: string[]) {
    this.list.push({
      field,
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${shown(value)}: supported values: ${supported.map((s) => `"${s}"`).join(', ')}`,
    });
  }
  notFound(field: string, value: unknown) {
    this.list.push({ field, reason: 'FieldValueNotFound', message: `Not found: ${shown(value)}` });
  }
  forbidden(field: string, detail: string) {
    this.list.push({ field, reason: 'FieldValueForbidden', message: `Forbidden: ${detail}` });
  }
  tooLong(field: string, max: number) {
    this.list.push({
      field,
      reason: 'FieldValueTooLong',
      message: `Too long: may not be more than ${max} bytes`,
    });
  }
  each(field: string, value: unknown, messages: string[]) {
    for (const m of messages) this.invalid(field, value, m);
  }
}

const TOTAL_ANNOTATION_SIZE = 256 * 1024;

function checkLabels(p: Problems, labels: unknown, field: string) {
  if (!isObject(labels)) return;
  for (const [k, v] of Object.entries(labels)) {
    p.each(field, k, qualifiedName(k));
    if (typeof v === 'string') p.each(field, v, labelValue(v));
  }
}

function checkAnnotations(p: Problems, annotations: unknown, field: string) {
  if (!isObject(annotations)) return;
  let size = 0;
  for (const [k, v] of Object.entries(annotations)) {
    p.each(field, k.toLowerCase(), qualifiedName(k.toLowerCase()));
    size += k.length + (typeof v === 'string' ? v.length : 0);
  }
  if (size > TOTAL_ANNOTATION_SIZE) p.tooLong(field, TOTAL_ANNOTATION_SIZE);
}

function checkSelector(p: Problems, selector: unknown, field: string) {
  if (!isObject(selector)) return;
  checkLabels(p, selector.matchLabels, `${field}.matchLabels`);
  const expressions = Array.isArray(selector.matchExpressions) ? selector.matchExpressions : [];
  expressions.forEach((e: unknown, i) => {
    if (!isObject(e)) return;
    const at = child(`${field}.matchExpressions`, i);
    if (typeof e.key === 'string') p.each(`${at}.key`, e.key, qualifiedName(e.key));
    const values = Array.isArray(e.values) ? e.values : [];
    if (e.operator === 'In' || e.operator === 'NotIn') {
      if (values.length === 0)
        p.required(`${at}.values`, "must be specified when `operator` is 'In' or 'NotIn'");
    } else if (e.operator === 'Exists' || e.operator === 'DoesNotExist') {
      if (values.length > 0)
        p.forbidden(`${at}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
    } else if (typeof e.operator === 'string') {
      p.invalid(`${at}.operator`, e.operator, 'not a valid selector operator');
    }
    for (const [j, v] of values.entries()) {
      if (typeof v === 'string') p.each(child(`${at}.values`, j), v, labelValue(v));
    }
  });
}

/** Whether `labels` satisfy a LabelSelector object (`matchLabels` and `matchExpressions`). */
export function selectorMatches(selector: Json, labels: Record<string, string>): boolean {
  const matchLabels = isObject(selector.matchLabels) ? (selector.matchLabels as Record<string, string>) : {};
  if (!Object.entries(matchLabels).every(([k, v]) => labels[k] === v)) return false;
  const expressions = Array.isArray(selector.matchExpressions) ? (selector.matchExpressions as Json[]) : [];
  return expressions.every((e) => {
    const key = String(e.key);
    const values = Array.isArray(e.values) ? (e.values as string[]) : [];
    switch (e.operator) {
      case 'In':
        return key in labels && values.includes(labels[key]);
      case 'NotIn':
        return !(key in labels) || !values.includes(labels[key]);
      case 'Exists':
        return key in labels;
      case 'DoesNotExist':
        return !(key in labels);
      default:
        return false;
    }
  });
}

function checkMetadata(p: Problems, kind: string, metadata: unknown, namespaced: boolean) {
  if (!isObject(metadata)) {
    p.required('metadata.name', 'name or generateName is required');
    return;
  }
  const name = metadata.name;
  if (typeof name !== 'string' || name === '') {
    if (typeof metadata.generateName !== 'string' || metadata.generateName === '') {
      p.required('metadata.name', 'name or generateName is required');
    }
  } else {
    const rule =
      kind === 'Namespace' || kind === 'StatefulSet'
        ? dns1123Label
        : kind === 'Service'
          ? dns1035Label
          : kind === 'Role' || kind === 'RoleBinding'
            ? pathSegmentName
            : dns1123Subdomain;
    p.each('metadata.name', name, rule(name));
  }
  if (typeof metadata.namespace === 'string' && metadata.namespace !== '') {
    if (!namespaced) p.forbidden('metadata.namespace', 'not allowed on this type');
    else p.each('metadata.namespace', metadata.namespace, dns1123Label(metadata.namespace));
  }
  checkLabels(p, metadata.labels, 'metadata.labels');
  checkAnnotations(p, metadata.annotations, 'metadata.annotations');
}

function checkPodTemplate(p: Problems, template: unknown, field: string) {
  if (!isObject(template)) return;
  const meta = isObject(template.metadata) ? template.metadata : {};
  checkLabels(p, meta.labels, `${field}.metadata.labels`);
  checkAnnotations(p, meta.annotations, `${field}.metadata.annotations`);
  const spec = isObject(template.spec) ? template.spec : {};
  const volumes = Array.isArray(spec.volumes) ? spec.volumes : [];
  const volumeNames = new Set<string>();
  volumes.forEach((v: unknown, i) => {
    if (!isObject(v) || typeof v.name !== 'string') return;
    const at = `${child(`${field}.spec.volumes`, i)}.name`;
    p.each(at, v.name, dns1123Label(v.name));
    if (volumeNames.has(v.name)) p.duplicate(at, v.name);
    volumeNames.add(v.name);
  });
  const containerNames = new Set<string>();
  for (const list of ['initContainers', 'containers'] as const) {
    const containers = Array.isArray(spec[list]) ? (spec[list] as unknown[]) : [];
    if (list === 'containers' && Array.isArray(spec.containers) && containers.length === 0) {
      p.required(`${field}.spec.containers`);
    }
    containers.forEach((c, i) => {
      if (!isObject(c)) return;
      const at = child(`${field}.spec.${list}`, i);
      if (typeof c.name === 'string') {
        p.each(`${at}.name`, c.name, dns1123Label(c.name));
        if (containerNames.has(c.name)) p.duplicate(`${at}.name`, c.name);
        containerNames.add(c.name);
      }
      const ports = Array.isArray(c.ports) ? c.ports : [];
      ports.forEach((port: unknown, j) => {
        if (!isObject(port)) return;
        const pat = child(`${at}.ports`, j);
        if (typeof port.name === 'string') p.each(`${pat}.name`, port.name, portName(port.name));
        if (typeof port.containerPort === 'number' && !isPort(port.containerPort)) {
          p.invalid(`${pat}.containerPort`, port.containerPort, PORT_RANGE);
        }
      });
      const mounts = Array.isArray(c.volumeMounts) ? c.volumeMounts : [];
      mounts.forEach((m: unknown, j) => {
        if (isObject(m) && typeof m.name === 'string' && !volumeNames.has(m.name)) {
          p.notFound(`${child(`${at}.volumeMounts`, j)}.name`, m.name);
        }
      });
    });
  }
}

function checkWorkload(p: Problems, kind: string, spec: unknown) {
  if (!isObject(spec)) return;
  if (typeof spec.replicas === 'number' && spec.replicas < 0) {
    p.invalid('spec.replicas', spec.replicas, 'must be greater than or equal to 0');
  }
  const selector = spec.selector;
  if (isObject(selector)) {
    checkSelector(p, selector, 'spec.selector');
    const count =
      Object.keys(isObject(selector.matchLabels) ? selector.matchLabels : {}).length +
      (Array.isArray(selector.matchExpressions) ? selector.matchExpressions.length : 0);
    if (count === 0) {
      p.invalid('spec.selector', selector, `empty selector is invalid for ${kind.toLowerCase()}`);
    } else if (isObject(spec.template)) {
      const meta = isObject(spec.template.metadata) ? spec.template.metadata : {};
      const labels = (isObject(meta.labels) ? meta.labels : {}) as Record<string, string>;
      if (!selectorMatches(selector, labels)) {
        p.invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`');
      }
    }
  }
  if (typeof spec.progressDeadlineSeconds === 'number') {
    const minReady = typeof spec.minReadySeconds === 'number' ? spec.minReadySeconds : 0;
    if (spec.progressDeadlineSeconds <= minReady) {
      p.invalid(
        'spec.progressDeadlineSeconds',
        spec.progressDeadlineSeconds,
        'must be greater than minReadySeconds',
      );
    }
  }
  checkPodTemplate(p, spec.template, 'spec.template');
}

function checkService(p: Problems, spec: unknown) {
  if (!isObject(spec)) return;
  const ports = Array.isArray(spec.ports) ? spec.ports : [];
  const names = new Set<string>();
  ports.forEach((port: unknown, i) => {
    if (!isObject(port)) return;
    const at = child('spec.ports', i);
    if (typeof port.name === 'string' && port.name !== '') {
      p.each(`${at}.name`, port.name, dns1123Label(port.name));
      if (names.has(port.name)) p.duplicate(`${at}.name`, port.name);
      names.add(port.name);
    } else if (ports.length > 1) {
      p.required(`${at}.name`);
    }
    if (typeof port.port === 'number' && !isPort(port.port)) p.invalid(`${at}.port`, port.port, PORT_RANGE);
    if (typeof port.targetPort === 'number' && !isPort(port.targetPort)) {
      p.invalid(`${at}.targetPort`, port.targetPort, PORT_RANGE);
    }
    if (typeof port.targetPort === 'string')
      p.each(`${at}.targetPort`, port.targetPort, portName(port.targetPort));
  });
  if (isObject(spec.selector)) checkLabels(p, spec.selector, 'spec.selector');
}

const MAX_SECRET_SIZE = 1024 * 1024;

function checkKeys(p: Problems, map: unknown, field: string): number {
  if (!isObject(map)) return 0;
  let size = 0;
  for (const [k, v] of Object.entries(map)) {
    if (k.length > 253) p.invalid(field, k, 'must be no more than 253 characters');
    if (!CONFIG_KEY.test(k)) {
      p.invalid(
        field,
        k,
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
      );
    }
    if (typeof v === 'string') size += v.length;
  }
  return size;
}

// --- CIDRs (NetworkPolicy ipBlock), as IsValidCIDR and the strict-subset rule ---

/** The address as a bigint and its width in bits, or null when it is not an IP. */
function ipBits(ip: string): { value: bigint; bits: number } | null {
  if (net.isIPv4(ip)) {
    return { value: ip.split('.').reduce((acc, o) => (acc << 8n) | BigInt(Number(o)), 0n), bits: 32 };
  }
  if (!net.isIPv6(ip) || ip.includes('.')) return null;
  const [head, tail = ''] = ip.split('::');
  const h = head ? head.split(':') : [];
  const t = ip.includes('::') ? (tail ? tail.split(':') : []) : [];
  const groups = ip.includes('::') ? [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t] : h;
  return { value: groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n), bits: 128 };
}

function parseCidr(v: string): { value: bigint; bits: number; prefix: number } | string {
  const m = /^([^/]+)\/(0|[1-9]\d*)$/.exec(v);
  const ip = m ? ipBits(m[1]) : null;
  if (!m || !ip || Number(m[2]) > ip.bits) {
    return 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)';
  }
  const prefix = Number(m[2]);
  const hostMask = (1n << BigInt(ip.bits - prefix)) - 1n;
  if ((ip.value & hostMask) !== 0n) return 'must not have bits set beyond the prefix length';
  return { ...ip, prefix };
}

function checkNetworkPolicy(p: Problems, spec: unknown) {
  if (!isObject(spec)) return;
  checkSelector(p, spec.podSelector, 'spec.podSelector');
  const checkPorts = (ports: unknown, field: string) => {
    (Array.isArray(ports) ? ports : []).forEach((port: unknown, i) => {
      if (!isObject(port)) return;
      const at = child(field, i);
      if (port.protocol !== undefined && !['TCP', 'UDP', 'SCTP'].includes(port.protocol as string)) {
        p.notSupported(`${at}.protocol`, port.protocol, ['TCP', 'UDP', 'SCTP']);
      }
      if (typeof port.port === 'number') {
        if (!isPort(port.port)) p.invalid(`${at}.port`, port.port, PORT_RANGE);
        if (typeof port.endPort === 'number' && port.endPort < port.port) {
          p.invalid(`${at}.endPort`, port.endPort, 'must be greater than or equal to `port`');
        }
      } else if (typeof port.port === 'string') {
        p.each(`${at}.port`, port.port, portName(port.port));
        if (port.endPort !== undefined)
          p.invalid(`${at}.endPort`, port.endPort, 'may not be specified when `port` is non-numeric');
      } else if (port.endPort !== undefined) {
        p.invalid(`${at}.endPort`, port.endPort, 'may not be specified when `port` is not specified');
      }
    });
  };
  const checkPeers = (peers: unknown, field: string) => {
    (Array.isArray(peers) ? peers : []).forEach((peer: unknown, i) => {
      if (!isObject(peer)) return;
      const at = child(field, i);
      const kinds = ['podSelector', 'namespaceSelector', 'ipBlock'].filter((k) => isObject(peer[k]));
      if (kinds.length === 0) p.required(at, 'must specify a peer');
      else if (kinds.length > 1 && kinds.includes('ipBlock'))
        p.forbidden(at, 'may not specify both ipBlock and another peer');
      checkSelector(p, peer.podSelector, `${at}.podSelector`);
      checkSelector(p, peer.namespaceSelector, `${at}.namespaceSelector`);
      const block = peer.ipBlock;
      if (!isObject(block) || typeof block.cidr !== 'string') return;
      if (block.cidr === '') return p.required(`${at}.ipBlock.cidr`);
      const cidr = parseCidr(block.cidr);
      if (typeof cidr === 'string') return p.invalid(`${at}.ipBlock.cidr`, block.cidr, cidr);
      (Array.isArray(block.except) ? block.except : []).forEach((e: unknown, j) => {
        if (typeof e !== 'string') return;
        const ex = parseCidr(e);
        const eat = child(`${at}.ipBlock.except`, j);
        if (typeof ex === 'string') return p.invalid(eat, e, ex);
        const inside =
          ex.bits === cidr.bits &&
          ex.prefix > cidr.prefix &&
          ex.value >> BigInt(cidr.bits - cidr.prefix) === cidr.value >> BigInt(cidr.bits - cidr.prefix);
        if (!inside) p.invalid(eat, e, 'must be a strict subset of `cidr`');
      });
    });
  };
  (Array.isArray(spec.ingress) ? spec.ingress : []).forEach((rule: unknown, i) => {
    if (!isObject(rule)) return;
    checkPorts(rule.ports, `${child('spec.ingress', i)}.ports`);
    checkPeers(rule.from, `${child('spec.ingress', i)}.from`);
  });
  (Array.isArray(spec.egress) ? spec.egress : []).forEach((rule: unknown, i) => {
    if (!isObject(rule)) return;
    checkPorts(rule.ports, `${child('spec.egress', i)}.ports`);
    checkPeers(rule.to, `${child('spec.egress', i)}.to`);
  });
  const types = Array.isArray(spec.policyTypes) ? spec.policyTypes : [];
  if (types.length > 2) p.invalid('spec.policyTypes', types, 'may not specify more than two policyTypes');
  types.forEach((t: unknown, i) => {
    if (t !== 'Ingress' && t !== 'Egress')
      p.notSupported(child('spec.policyTypes', i), t, ['Ingress', 'Egress']);
  });
}

/** The API server's rules beyond the schema, for a manifest of a known kind. */
function ruleProblems(kind: string, obj: Json): ManifestProblem[] {
  const p = new Problems();
  checkMetadata(p, kind, obj.metadata, kind !== 'Namespace');
  switch (kind) {
    case 'Deployment':
    case 'StatefulSet':
      checkWorkload(p, kind, obj.spec);
      break;
    case 'Job':
      if (isObject(obj.spec)) checkPodTemplate(p, obj.spec.template, 'spec.template');
      break;
    case 'Service':
      checkService(p, obj.spec);
      break;
    case 'NetworkPolicy':
      checkNetworkPolicy(p, obj.spec);
      break;
    case 'Secret':
    case 'ConfigMap': {
      const binary = kind === 'Secret' ? 'stringData' : 'binaryData';
      const size = checkKeys(p, obj.data, 'data') + checkKeys(p, obj[binary], binary);
      if (size > MAX_SECRET_SIZE) p.tooLong('data', MAX_SECRET_SIZE);
      if (kind === 'ConfigMap' && isObject(obj.data) && isObject(obj.binaryData)) {
        for (const k of Object.keys(obj.binaryData)) if (k in obj.data) p.duplicate('data', k);
      }
      break;
    }
  }
  return p.list;
}

/**
 * The problems the API server would find with `obj`, each with its field and the API server's
 * wording (empty when it would be stored). See the file's comment for what is checked: `schema`
 * alone is what the API server finds decoding the body (types, unknown fields), `rules` alone
 * what the kind's validation finds after (names, labels, selectors...).
 */
export function manifestProblems(obj: unknown, part: 'all' | 'schema' | 'rules' = 'all'): ManifestProblem[] {
  if (!isObject(obj))
    return [{ field: '', reason: 'FieldValueInvalid', message: 'a manifest must be an object' }];
  const { apiVersion, kind } = obj;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || !apiVersion || !kind) {
    return [
      {
        field: typeof apiVersion === 'string' && apiVersion ? 'kind' : 'apiVersion',
        reason: 'FieldValueRequired',
        message: 'Required value: apiVersion and kind name the schema a manifest is checked against',
      },
    ];
  }
  const { kinds, validator } = schemas();
  const validate = validator(`${apiVersion}/${kind}`);
  if (!validate) {
    return [
      {
        field: 'kind',
        reason: 'FieldValueNotSupported',
        message: `Unsupported value: "${apiVersion}/${kind}": no schema for this kind (known: ${Object.keys(kinds).join(', ')})`,
      },
    ];
  }
  const cleaned = withoutNulls(obj) as Json;
  const problems =
    part === 'rules' || validate(cleaned)
      ? []
      : (validate.errors ?? []).map((e) => schemaProblem(e, cleaned));
  if (part === 'schema') return problems;
  const seen = new Set(problems.map((pr) => `${pr.field} ${pr.message}`));
  for (const pr of ruleProblems(kind, cleaned)) {
    if (!seen.has(`${pr.field} ${pr.message}`)) problems.push(pr);
  }
  return problems;
}

/**
 * The problems the API server would find with `obj`, as `<field>: <problem>` lines (empty when it
 * is valid): `spec.replicas: Invalid value: "2": must be of type integer`,
 * `spec.foo: field not declared in schema`, `metadata.name: Invalid value: "Cube_7": a lowercase
 * RFC 1123 subdomain must...`. An unknown apiVersion/kind is a problem, not a pass.
 */
export function validateManifest(obj: unknown): string[] {
  return manifestProblems(obj).map((pr) => (pr.field ? `${pr.field}: ${pr.message}` : pr.message));
}
