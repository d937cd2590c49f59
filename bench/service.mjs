// Starting the built service for a bench: a free port on loopback, then /health/live.
/* global fetch */
import { spawn } from 'node:child_process';
import net from 'node:net';

/** A TCP port free on loopback at the moment of asking. */
export const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/**
 * Starts `node argv` with `env` (plus PORT and HOST of a free loopback port) and resolves once it
 * answers /health/live, or rejects with its stderr when it exits first or takes over 60 s.
 * `onSpawn` sees the child at once, so a caller can kill it whatever happens next. `command` is
 * the line to print, with `hide` (e.g. a secret) shown as `<random>`.
 */
export async function startService({ name, argv, env, cwd, node = process.execPath, onSpawn, hide = [] }) {
  const port = await freePort();
  const fullEnv = { ...env, PORT: String(port), HOST: '127.0.0.1' };
  const child = spawn(node, argv, {
    cwd,
    env: { ...process.env, ...fullEnv },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  onSpawn?.(child);
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const exited = new Promise((_, reject) =>
    child.on('exit', (code) => reject(new Error(`${name} exited (${code}):\n${stderr}`))),
  );
  const base = `http://127.0.0.1:${port}`;
  let waiting = true;
  const ready = (async () => {
    for (let i = 0; waiting; i++) {
      if (i === 600) throw new Error(`${name} did not answer /health/live within 60 s:\n${stderr}`);
      try {
        if ((await fetch(`${base}/health/live`)).ok) return;
      } catch {
        /* not listening yet */
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  try {
    await Promise.race([ready, exited]);
  } finally {
    waiting = false;
    exited.catch(() => {});
    ready.catch(() => {});
  }
  const shown = Object.entries(fullEnv)
    .map(([k, v]) => (hide.includes(k) ? `${k}=<random>` : `${k}=${v}`))
    .join(' ');
  const shownNode = node === process.execPath ? 'node' : node;
  return { name, child, pid: child.pid, port, base, command: `${shown} ${shownNode} ${argv.join(' ')}` };
}
