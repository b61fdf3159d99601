// The shared parts of a render farm for the cluster suite, all on loopback: a throwaway redis-server (Debian's, as
// harness/redis.ts starts it), s3rver (harness/s3.ts) behind a TCP proxy that counts the bytes going each
// way, a client that reads Redis' command counter, and `wmark worker` processes.
import type { ChildProcess } from 'node:child_process';
import net from 'node:net';
import type { Redis } from 'ioredis';
import { startProcess } from '../../harness/start-process.js';

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
export async function startWorkerProcess(
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; track: (proc: ChildProcess) => void },
): Promise<WorkerProcess> {
  const worker = startProcess({
    name: 'wmark worker',
    command: process.execPath,
    args,
    cwd: options.cwd,
    env: options.env,
    ready: { line: /^\{.*$/, what: 'its id (a JSON line on stdout)' },
    timeoutMs: 30_000,
    keep: 50_000,
  });
  options.track(worker.proc);
  const [line] = await worker.ready;
  return { proc: worker.proc, id: (JSON.parse(line!) as { worker: string }).worker, stderr: worker.stderr };
}
