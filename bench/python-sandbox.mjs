// Measures the Python sandbox as the API runs it: PythonSandbox from the build (BENCH_DIST,
// default dist/), Pyodide in bubblewrap. Reports:
//   probe: the one-off check at start (Node in the sandbox, doing nothing);
//   cold:  a child's start, from its spawn to its ready message (Pyodide loaded), one at a time;
//   warm:  a run on a warm child, from run() to its answer (the job sent, run, answered), for a
//          trivial snippet over `--rows` rows, the pool refilled before each run;
//   RSS:   a warm idle child's resident memory (Node + Pyodide), from /proc.
// Usage: node bench/python-sandbox.mjs [--cold 3] [--warm 20] [--rows 100]
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    cold: { type: 'string', default: '3' },
    warm: { type: 'string', default: '20' },
    rows: { type: 'string', default: '100' },
  },
});
const dist = path.resolve(process.env.BENCH_DIST ?? 'dist');
const { PythonSandbox } = await import(path.join(dist, 'src/modules/python-runs/sandbox/python-sandbox.js'));

const SNIPPET = 'total = sum(r["amount"] for r in rows)\nprint(len(rows))\noutput = {"total": total}';
const rows = Array.from({ length: Number(values.rows) }, (_, i) => ({
  id: i,
  amount: i * 1.5,
  city: `c${i % 7}`,
}));

function summary(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const fmt = (ms) => (ms >= 100 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`);
  return `median ${fmt(at(0.5))}, min ${fmt(sorted[0])}, max ${fmt(sorted[sorted.length - 1])} (n=${samples.length})`;
}

/** Resident memory of the pool's Node children (their command line names the pool's tag). */
function childRssMb(tag) {
  const sizes = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (!cmdline.some((a) => a.includes(tag)) || !cmdline.some((a) => a.endsWith('python-child.mjs')))
        continue;
      if (cmdline[0].endsWith('bwrap') || cmdline[0].endsWith('prlimit')) continue;
      const rss = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${entry}/status`, 'utf8'));
      if (rss) sizes.push(Number(rss[1]) / 1024);
    } catch {
      // ended meanwhile
    }
  }
  return sizes;
}

const probes = [];
const colds = [];
for (let i = 0; i < Number(values.cold); i += 1) {
  const sandbox = new PythonSandbox({ poolSize: 1 });
  let t = performance.now();
  await sandbox.start();
  probes.push(performance.now() - t);
  if (sandbox.available() !== true) {
    console.error(`unavailable: ${sandbox.available()}`);
    process.exit(1);
  }
  t = performance.now();
  await sandbox.whenWarm();
  colds.push(performance.now() - t);
  await sandbox.close();
}

const sandbox = new PythonSandbox({ poolSize: 1 });
const warms = [];
let rss = [];
try {
  await sandbox.whenWarm();
  rss = childRssMb(sandbox.tag);
  for (let i = 0; i < Number(values.warm); i += 1) {
    await sandbox.whenWarm();
    const t = performance.now();
    const result = await sandbox.run(SNIPPET, rows);
    warms.push(performance.now() - t);
    if (result.executionError || result.stdout !== `${rows.length}\n`) {
      throw new Error(`unexpected result: ${JSON.stringify(result)}`);
    }
  }
} finally {
  await sandbox.close();
}

console.log(`node ${process.version}, ${process.platform}/${process.arch}`);
console.log(`probe: ${summary(probes)}`);
console.log(`cold (spawn to ready): ${summary(colds)}`);
console.log(`warm run (${rows.length} rows, run() to answer): ${summary(warms)}`);
console.log(`warm idle child RSS: ${rss.map((mb) => `${mb.toFixed(0)} MB`).join(', ') || 'n/a'}`);
