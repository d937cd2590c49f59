import { spawn, type ChildProcess } from 'node:child_process';

const REDIS_SERVER = '/usr/bin/redis-server';

/** A redis-server child process of one test file, on a port of its own, to kill and restart. */
export class RedisProcess {
  private child: ChildProcess | null = null;

  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== null;
  }

  async start(): Promise<void> {
    if (this.child) return;
    const child = spawn(
      REDIS_SERVER,
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out}`)), 10_000);
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with ${code}: ${out}`));
      });
    });
    child.stdout.resume();
    child.stderr.resume();
  }

  /** Kills the server abruptly (SIGKILL) and waits until it is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = null;
    if (child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }
}
