// Measures start-up time (process spawn to "listening") and resident memory at idle of the API.
// Usage: node bench/startup.mjs [runs]   (DATABASE_URL / REDIS_URL from the environment; none = embedded)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const runs = Number(process.argv[2] ?? 3);
const rssMb = (pid) =>
  Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

async function once() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-data-'));
  const started = performance.now();
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(4000 + Math.floor(Math.random() * 1000)),
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  await new Promise((resolve, reject) => {
    const onData = (c) => {
      out += c;
      if (out.includes('listening on')) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', () => reject(new Error(out)));
  });
  const startupMs = performance.now() - started;
  await new Promise((r) => setTimeout(r, 5000));
  const idleRss = rssMb(child.pid);
  child.kill('SIGTERM');
  await new Promise((r) => child.on('exit', r));
  fs.rmSync(dataDir, { recursive: true, force: true });
  return { startupMs, idleRss };
}

const results = [];
for (let i = 0; i < runs; i++) results.push(await once());
const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  JSON.stringify({
    mode: process.env.DATABASE_URL ? 'postgres' : 'embedded',
    runs,
    startupMsMedian: Math.round(median(results.map((r) => r.startupMs))),
    idleRssMbMedian: Math.round(median(results.map((r) => r.idleRss))),
  }),
);
