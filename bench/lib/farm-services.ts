// The shared parts of a render farm for the cluster suite, all on loopback: a throwaway redis-server (Debian's, as
// test/helpers/redis.ts starts it), s3rver (test/helpers/s3.ts) behind a TCP proxy that counts the bytes going each
// way, a client that reads Redis' command counter, and `wmark worker` processes.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';

export const REDIS_SERVER = process.env.WMARK_REDIS_SERVER ?? 'redis-server';

/** A free TCP port on loopback (free when asked: the caller retries if it is taken before it binds). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface RedisProcess {
  proc: ChildProcess;
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** redis-server on a free loopback port, no persistence, in a temp folder; retries another port when one is taken. */
export async function startRedisServer(): Promise<RedisProcess> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-redis-'));
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const proc = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`redis-server did not start within 10 s:\n${output}`)), 10_000);
        const onData = (chunk: Buffer) => {
          output += chunk.toString('utf8');
          if (output.includes('Ready to accept connections')) {
            clearTimeout(timer);
            resolve();
          }
        };
        proc.stdout!.on('data', onData);
        proc.stderr!.on('data', onData);
        proc.once('error', (error) => {
          clearTimeout(timer);
          reject(new Error(`cannot run ${REDIS_SERVER} (Debian: apt-get install redis-server; or set WMARK_REDIS_SERVER): ${error.message}`));
        });
        proc.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`redis-server exited with code ${code}:\n${output}`));
        });
      });
    } catch (error) {
      await stopProcess(proc, 5_000);
      if (attempt < 2 && /Address already in use/.test(output)) continue;
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
    proc.stdout!.resume();
    proc.stderr!.resume();
    return {
      proc,
      port,
      url: `redis://127.0.0.1:${port}`,
      stop: async () => {
        await stopProcess(proc, 5_000);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
export async function stopProcess(proc: ChildProcess, graceMs: number): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Commands Redis has processed since it started (INFO stats total_commands_processed). */
export async function redisCommands(client: Redis): Promise<number> {
  const info = await client.info('stats');
  const m = /total_commands_processed:(\d+)/.exec(info);
  if (!m) throw new Error(`no total_commands_processed in INFO stats:\n${info}`);
  return Number(m[1]);
}

export interface ByteMeter {
  /** http://127.0.0.1:PORT: give this as --s3-endpoint instead of the store's own. */
  endpoint: string;
  /** Bytes so far: `up` from clients to the store (PUT bodies and every request), `down` back (GET bodies and answers). */
  counts(): { up: number; down: number; connections: number };
  close(): Promise<void>;
}

/**
 * A TCP proxy in front of `target` (host:port of an HTTP store) that counts the bytes each way, headers included:
 * what crosses a store's network link, whichever client (serve or a worker) sends it.
 */
export async function startByteMeter(target: { host: string; port: number }): Promise<ByteMeter> {
  let up = 0;
  let down = 0;
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    connections++;
    const store = net.connect(target.port, target.host);
    sockets.add(client).add(store);
    client.on('data', (d: Buffer) => (up += d.length));
    store.on('data', (d: Buffer) => (down += d.length));
    client.pipe(store);
    store.pipe(client);
    const end = () => {
      client.destroy();
      store.destroy();
      sockets.delete(client);
      sockets.delete(store);
    };
    client.on('error', end).on('close', end);
    store.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    counts: () => ({ up, down, connections }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export interface WorkerProcess {
  proc: ChildProcess;
  /** The id it printed once it took work. */
  id: string;
  stderr: () => string;
}

/**
 * Starts `wmark worker` (a command line for node) and resolves once it printed its id on stdout (its --json line).
 * `track` gets the process at once, so that whoever cleans up can stop it even when it never starts.
 */
export async function startWorkerProcess(args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; track: (proc: ChildProcess) => void }): Promise<WorkerProcess> {
  const proc = spawn(process.execPath, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  options.track(proc);
  let out = '';
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => {
    err = (err + d.toString('utf8')).slice(-50_000);
  });
  const id = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`wmark worker: no id on stdout within 30 s\n${err.slice(-3000)}`)), 30_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      const line = out.split('\n').slice(0, -1).find((l) => l.startsWith('{'));
      if (line) {
        clearTimeout(timer);
        try {
          resolve((JSON.parse(line) as { worker: string }).worker);
        } catch (error) {
          reject(error as Error);
        }
      }
    });
    proc.once('error', reject);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`wmark worker exited with code ${code} before it started\n${err.slice(-3000)}`));
    });
  });
  proc.stdout!.resume();
  return { proc, id, stderr: () => err };
}
