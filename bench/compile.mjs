// Measures a data-model compile as the API runs it: ModelCompiler from the build (BENCH_DIST,
// default dist/) compiling a generated YAML model in a warm sandboxed child (bubblewrap; the child
// has loaded the compiler before the model is sent, as in an API process with
// MODEL_COMPILE_POOL_SIZE=1). Each run waits until a warm child is ready, then times compile()
// (what a validate request waits for). Also the compile process's peak RSS (the sandboxed Node
// and its transpiler thread; Linux, sampled from /proc every 10 ms).
// Usage: node bench/compile.mjs [--cubes 50] [--runs 5] [--memory-mb 512]
import 'reflect-metadata';
import { Buffer } from 'node:buffer';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clearInterval, setInterval } from 'node:timers';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    cubes: { type: 'string', default: '50' },
    runs: { type: 'string', default: '5' },
    'memory-mb': { type: 'string', default: '512' },
  },
});
const cubes = Number(values.cubes);
const runs = Number(values.runs);
const dist = path.resolve(process.env.BENCH_DIST ?? 'dist');
const { ModelCompiler } = await import(path.join(dist, 'src/modules/data-model/compiler/model-compiler.js'));
const { AppConfig } = await import(path.join(dist, 'src/core/config/app-config.js'));

/**
 * A model shaped like a real one: each cube has 6 measures, 12 dimensions (a time one), a segment,
 * a pre-aggregation and a join to the cube before it; one view per ten cubes over a join path.
 */
function cubeYaml(i) {
  const join =
    i > 0
      ? `    joins:\n      - name: c${i - 1}\n        sql: "{CUBE}.parent_id = {c${i - 1}}.id"\n        relationship: many_to_one\n`
      : '';
  const measures = ['count', 'sum', 'avg', 'min', 'max', 'count_distinct']
    .map((type, m) =>
      type === 'count'
        ? `      - name: m${m}\n        type: count\n`
        : `      - name: m${m}\n        sql: amount_${m}\n        type: ${type}\n        format: currency\n`,
    )
    .join('');
  const dimensions = Array.from({ length: 11 }, (_, d) =>
    d === 0
      ? `      - name: id\n        sql: id\n        type: number\n        primary_key: true\n`
      : `      - name: d${d}\n        sql: col_${d}\n        type: ${d % 3 === 0 ? 'number' : 'string'}\n        description: Dimension ${d} of cube ${i}\n`,
  ).join('');
  return `cubes:
  - name: c${i}
    sql_table: analytics.table_${i}
    description: Generated cube ${i}
${join}    measures:
${measures}    dimensions:
${dimensions}      - name: created_at
        sql: created_at
        type: time
    segments:
      - name: recent
        sql: "{CUBE}.created_at > now() - interval '30 day'"
    pre_aggregations:
      - name: daily
        measures: [m0, m1]
        dimensions: [d1, d2]
        time_dimension: created_at
        granularity: day
`;
}

function viewYaml(v) {
  const base = v * 10 + 1;
  return `views:
  - name: v${v}
    cubes:
      - join_path: c${base}
        includes: [m0, m1, d1, d2, created_at]
      - join_path: c${base}.c${base - 1}
        prefix: true
        includes: [m0, d1]
`;
}

const files = [
  ...Array.from({ length: cubes }, (_, i) => ({ fileName: `model/cubes/c${i}.yml`, content: cubeYaml(i) })),
  ...Array.from({ length: Math.floor(cubes / 10) }, (_, v) => ({
    fileName: `model/views/v${v}.yml`,
    content: viewYaml(v),
  })),
];

/**
 * Peak RSS (VmHWM) of the largest process below this one, kB: the sandboxed Node (prlimit execs
 * bwrap, which starts bwrap inside its namespaces, which starts Node). The warm child waiting
 * beside it has loaded the compiler only.
 */
function descendantsPeakKb() {
  const parent = new Map();
  const hwm = new Map();
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
      parent.set(Number(pid), Number(/PPid:\s+(\d+)/.exec(status)?.[1]));
      hwm.set(Number(pid), Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0));
    } catch {
      // gone meanwhile
    }
  }
  let peak = 0;
  for (const [pid, kb] of hwm) {
    for (let p = parent.get(pid); p; p = parent.get(p)) {
      if (p === process.pid) {
        peak = Math.max(peak, kb);
        break;
      }
    }
  }
  return peak;
}

const compiler = new ModelCompiler(
  new AppConfig('api', {
    NODE_ENV: 'test',
    MODEL_COMPILE_TIMEOUT_MS: '600000',
    MODEL_COMPILE_MEMORY_MB: values['memory-mb'],
    MODEL_COMPILE_POOL_SIZE: '1',
  }),
);
compiler.onApplicationBootstrap();
const results = [];
for (let run = 0; run < runs; run++) {
  // As a validate finds it in an API process between requests: a child ready and waiting.
  await compiler.whenWarm();
  let peakKb = 0;
  const sampler = setInterval(() => (peakKb = Math.max(peakKb, descendantsPeakKb())), 10);
  const started = performance.now();
  const result = await compiler.compile(files);
  const ms = performance.now() - started;
  clearInterval(sampler);
  if (!result.valid || result.cubesCount !== cubes + Math.floor(cubes / 10)) {
    throw new Error(`unexpected result: ${JSON.stringify(result).slice(0, 2000)}`);
  }
  results.push({ ms, peakMb: peakKb / 1024 });
  process.stderr.write(
    `run ${run + 1}: ${Math.round(ms)} ms, child peak RSS ${Math.round(peakKb / 1024)} MB\n`,
  );
}
await compiler.onApplicationShutdown();
const sorted = (xs) => [...xs].sort((a, b) => a - b);
const median = (xs) => sorted(xs)[Math.floor(xs.length / 2)];
console.log(
  JSON.stringify({
    node: process.version,
    cpus: os.cpus().length,
    cubes,
    views: Math.floor(cubes / 10),
    files: files.length,
    modelBytes: files.reduce((n, f) => n + Buffer.byteLength(f.content), 0),
    runs,
    warm: true,
    msMedian: Math.round(median(results.map((r) => r.ms))),
    msMin: Math.round(sorted(results.map((r) => r.ms))[0]),
    msMax: Math.round(sorted(results.map((r) => r.ms)).at(-1)),
    childPeakRssMbMedian: Math.round(median(results.map((r) => r.peakMb))),
  }),
);
