// The generated data model of the data-model benches (bench/data-model.mjs, bench/compile-load.mjs)
// and how it gets onto a branch: the command-line client's upload. One module, so both benches
// compile the same model and their figures compare.
//   - cubeYaml   a ~2 KB YAML cube: sql_table, a primary key and seven dimensions, a time one, a
//                count and a sum measure, optionally a many-to-one join to another cube
//   - modelFiles the model: N cubes (each joined to the one before) and one view per ten cubes
//   - changedCube a one-line change of the first cube (its description), to make a tree no
//                compile has seen yet
//   - upload     upload/start, the parts (multipart, as the reference CLI sends them), upload/finish
/* global fetch, FormData, Blob */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { api } from './service.mjs';

export const sha1 = (s) => createHash('sha1').update(s).digest('hex');

/** The data-model routes of deployment `d`. */
export const dmBase = (d) => `/build/api/v1/deployments/${d}`;

const DIMENSIONS = [
  ['status', 'string', 'Lifecycle state of the row as recorded by the source system'],
  ['region', 'string', 'Sales region of the customer at the time of the event'],
  ['channel', 'string', 'Acquisition channel (web, partner, direct or marketplace)'],
  ['customer_id', 'number', 'Identifier of the customer in the CRM'],
  ['parent_id', 'number', 'The row of the parent entity this one belongs to'],
  ['product_category', 'string', 'Category of the product sold, from the product catalogue'],
  ['is_test', 'boolean', 'Whether the row comes from a test account (excluded from reports)'],
];

/**
 * A YAML cube of ~2 KB: sql_table, a primary key and seven dimensions, a time dimension, a count
 * and a sum measure; with `join`, a many-to-one join to that cube. `note` varies the content (one
 * line: the description).
 */
export function cubeYaml(name, table, { join = null, note = '' } = {}) {
  const joins = join
    ? `    joins:\n      - name: ${join}\n        sql: "{CUBE}.parent_id = {${join}}.id"\n        relationship: many_to_one\n`
    : '';
  const dims = DIMENSIONS.map(
    ([dim, type, description]) =>
      `      - name: ${dim}\n        sql: ${dim}\n        type: ${type}\n        title: ${dim.replace(/_/g, ' ')}\n` +
      `        description: ${description}\n`,
  ).join('');
  return `cubes:
  - name: ${name}
    sql_table: analytics.${table}
    title: ${name.replace(/_/g, ' ')}
    description: Generated cube over analytics.${table}${note ? ` (${note})` : ''}; one row per business event
${joins}    dimensions:
      - name: id
        sql: id
        type: number
        primary_key: true
        public: true
${dims}      - name: created_at
        sql: created_at
        type: time
        title: created at
        description: When the event happened, in UTC

    measures:
      - name: count
        type: count
        title: Number of rows
        description: Rows of analytics.${table} after the filters of the query
      - name: total_amount
        sql: amount
        type: sum
        format: currency
        title: Total amount
        description: Sum of the amount column, in the account currency
`;
}

/** A view over a cube and the one it joins to (prefixed). */
function viewYaml(v) {
  const a = `cube_${v * 10 + 1}`;
  const b = `cube_${v * 10}`;
  return `views:
  - name: view_${v}
    description: Cube ${a} with its parent ${b}
    cubes:
      - join_path: ${a}
        includes: [count, total_amount, status, region, created_at]
      - join_path: ${a}.${b}
        prefix: true
        includes: [count, status]
`;
}

/** The views of a model of `cubes` cubes: one per ten cubes, at least one. */
export const viewCount = (cubes) => Math.max(1, Math.floor(cubes / 10));

/** The files of the model: `cubes` cubes (each joined to the one before) and their views. */
export function modelFiles(cubes) {
  if (cubes < 2) throw new Error('--cubes must be at least 2 (the views join two cubes)');
  return [
    ...Array.from({ length: cubes }, (_, i) => ({
      path: `model/cubes/cube_${i}.yml`,
      content: cubeYaml(`cube_${i}`, `table_${i}`, { join: i > 0 ? `cube_${i - 1}` : null }),
    })),
    ...Array.from({ length: viewCount(cubes) }, (_, v) => ({
      path: `model/views/view_${v}.yml`,
      content: viewYaml(v),
    })),
  ];
}

/**
 * The first cube of the model with its description naming `note`: one changed line, so the model
 * tree (and every verdict keyed by it) is one no compile has seen when `note` is new. Same cubes,
 * same members: the model still validates with the same count.
 */
export const changedCube = (note) => ({
  path: 'model/cubes/cube_0.yml',
  content: cubeYaml('cube_0', 'table_0', { note }),
});

/** One part of an upload, as the command-line client sends it (transaction as JSON `{"id"}`). */
async function uploadPart(server, token, d, transaction, fileName, content) {
  const form = new FormData();
  form.append('transaction', JSON.stringify(transaction));
  form.append('fileName', fileName);
  form.append('file', new Blob([content]), path.posix.basename(fileName));
  const res = await fetch(`${server}${dmBase(d)}/data-model/upload/file`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`upload/file ${fileName}: ${res.status} ${text.slice(0, 500)}`);
  if (JSON.parse(text).hash !== sha1(content)) throw new Error(`upload/file ${fileName}: unexpected hash`);
}

/**
 * A whole upload to the deploy branch of deployment `d` on the service at `server` (its base URL):
 * start, the parts (`concurrency` in flight), finish with every file's hash. Answers the time of
 * each phase and the total (ms).
 */
export async function upload(server, token, d, files, concurrency) {
  const t0 = performance.now();
  const { transaction } = await api(server, 'POST', `${dmBase(d)}/data-model/upload/start`, {}, { token });
  const t1 = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const f = files[next++];
      await uploadPart(server, token, d, transaction, f.path, f.content);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, files.length) }, worker));
  const t2 = performance.now();
  const hashes = Object.fromEntries(files.map((f) => [f.path, { hash: sha1(f.content) }]));
  const done = await api(
    server,
    'POST',
    `${dmBase(d)}/data-model/upload/finish`,
    { transaction, files: hashes },
    { token },
  );
  const t3 = performance.now();
  if (!/^[0-9a-f]{40}$/.test(done.lastHash ?? '')) throw new Error(`upload/finish: ${JSON.stringify(done)}`);
  return { totalMs: t3 - t0, startMs: t1 - t0, filesMs: t2 - t1, finishMs: t3 - t2 };
}
