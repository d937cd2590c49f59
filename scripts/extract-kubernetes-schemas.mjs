// Extracts, from Kubernetes' OpenAPI v2 document (swagger.json), the schemas of the kinds the tests
// check manifests against, and writes test/fixtures/kubernetes/schemas.json (see the README there).
//
//   node scripts/extract-kubernetes-schemas.mjs <swagger.json> [out.json]
//
// Keeps the `definitions` reachable from the kinds below through `$ref`, nothing else, with only
// the keywords validation needs: descriptions and patch-strategy hints are dropped. The output is
// stable (keys sorted), so re-running on the same document gives the same file.
import fs from 'node:fs';
import path from 'node:path';

/** The kinds checked, as `apiVersion/kind`; each must appear in the document exactly once. */
const KINDS = [
  'apps/v1/Deployment',
  'apps/v1/StatefulSet',
  'batch/v1/Job',
  'networking.k8s.io/v1/NetworkPolicy',
  'rbac.authorization.k8s.io/v1/Role',
  'rbac.authorization.k8s.io/v1/RoleBinding',
  'v1/ConfigMap',
  'v1/Namespace',
  'v1/PersistentVolumeClaim',
  'v1/Secret',
  'v1/Service',
  'v1/ServiceAccount',
];

/** Schema keywords kept; everything else (descriptions, patch strategies, unions) is dropped. */
const KEPT = new Set([
  '$ref',
  'additionalProperties',
  'format',
  'items',
  'properties',
  'required',
  'type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
]);

const root = path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), '..');
const [input, output = path.join(root, 'test/fixtures/kubernetes/schemas.json')] = process.argv.slice(2);
if (!input) {
  process.stderr.write('usage: node scripts/extract-kubernetes-schemas.mjs <swagger.json> [out.json]\n');
  process.exit(2);
}
const swagger = JSON.parse(fs.readFileSync(input, 'utf8'));
const definitions = swagger.definitions;

const apiVersionOf = ({ group, version }) => (group ? `${group}/${version}` : version);
const kinds = {};
for (const [name, schema] of Object.entries(definitions)) {
  for (const gvk of schema['x-kubernetes-group-version-kind'] ?? []) {
    const key = `${apiVersionOf(gvk)}/${gvk.kind}`;
    if (!KINDS.includes(key)) continue;
    if (kinds[key]) throw new Error(`${key} is defined twice: ${kinds[key]} and ${name}`);
    kinds[key] = name;
  }
}
const missing = KINDS.filter((k) => !kinds[k]);
if (missing.length) throw new Error(`not in the document: ${missing.join(', ')}`);

/** A schema with only the kept keywords, `properties` cleaned one level down per property. */
function clean(schema) {
  const out = {};
  for (const key of Object.keys(schema).sort()) {
    if (!KEPT.has(key)) continue;
    const value = schema[key];
    if (key === 'properties') {
      out.properties = Object.fromEntries(
        Object.keys(value)
          .sort()
          .map((p) => [p, clean(value[p])]),
      );
    } else if ((key === 'items' || key === 'additionalProperties') && typeof value === 'object') {
      out[key] = clean(value);
    } else {
      out[key] = value;
    }
  }
  return out;
}

/** The definitions reachable from `start` through `$ref`, breadth first. */
const reachable = new Set();
const queue = Object.values(kinds);
const refs = (node, found = []) => {
  if (Array.isArray(node)) node.forEach((n) => refs(n, found));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') found.push(v);
      else refs(v, found);
    }
  }
  return found;
};
while (queue.length) {
  const name = queue.shift();
  if (reachable.has(name)) continue;
  if (!definitions[name]) throw new Error(`dangling $ref to ${name}`);
  reachable.add(name);
  for (const ref of refs(definitions[name])) queue.push(ref.replace(/^#\/definitions\//, ''));
}

const fixture = {
  kinds: Object.fromEntries(
    Object.keys(kinds)
      .sort()
      .map((k) => [k, kinds[k]]),
  ),
  definitions: Object.fromEntries([...reachable].sort().map((n) => [n, clean(definitions[n])])),
};
fs.mkdirSync(path.dirname(output), { recursive: true });
fs.writeFileSync(output, `${JSON.stringify(fixture, null, 1)}\n`);
process.stderr.write(
  `${Object.keys(fixture.kinds).length} kinds, ${reachable.size} definitions -> ${path.relative(process.cwd(), output)}\n`,
);
