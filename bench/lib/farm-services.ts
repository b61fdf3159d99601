// The shared parts of a render farm for the cluster suite, all on loopback: a throwaway redis-server (Debian's, as
// harness/redis.ts starts it), s3rver (harness/s3.ts) behind a TCP proxy that counts the bytes going each
// way, a client that reads Redis' command counter, and `wmark worker` processes.
import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import type { Redis } from 'ioredis';

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
 * Waits for the first JSON line a wmark command run with --json prints on stdout (its start line), and answers what
 * `accept` makes of it; a line it does not accept (a usage error, whose exit follows) is put before stderr, which the
 * errors quote. Rejects with `exited(code, stderr)` when the process ends first, and after `timeoutMs` without a line.
 * Call it as soon as the process is spawned: it keeps the last 50 kB of stderr from then on.
 */
export async function jsonStart<T>(
  proc: ChildProcess,
  label: string,
  timeoutMs: number,
  accept: (line: Record<string, unknown>) => T | undefined,
  exited: (code: number | null, stderr: string) => Error,
): Promise<{ value: T; stderr: () => string }> {
  let out = '';
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => {
    err = (err + d.toString('utf8')).slice(-50_000);
  });
  const value = await new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label}: no start line on stdout within ${timeoutMs / 1000} s\n${err.slice(-3000)}`)), timeoutMs);
    let seen = false;
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      const line = out
        .split('\n')
        .slice(0, -1)
        .find((l) => l.startsWith('{'));
      if (!line || seen) return;
      seen = true;
      clearTimeout(timer);
      try {
        const parsed = JSON.parse(line) as Record<string, unknown> & { error?: { code: string; message: string } };
        const accepted = accept(parsed);
        if (accepted !== undefined) resolve(accepted);
        else if (parsed.error) err = `${parsed.error.code}: ${parsed.error.message}\n${err}`;
      } catch (error) {
        reject(error as Error);
      }
    });
    proc.once('error', reject);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(exited(code, err));
    });
  });
  proc.stdout!.resume();
  return { value, stderr: () => err };
}

/**
 * Starts `wmark worker` (a command line for node) and resolves once it printed its id on stdout (its --json line).
 * `track` gets the process at once, so that whoever cleans up can stop it even when it never starts.
 */
export async function startWorkerProcess(
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; track: (proc: ChildProcess) => void },
): Promise<WorkerProcess> {
  const proc = spawn(process.execPath, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  options.track(proc);
  const started = await jsonStart(
    proc,
    'wmark worker',
    30_000,
    (line) => (typeof line.worker === 'string' ? line.worker : undefined),
    (code, stderr) => new Error(`wmark worker exited with code ${code} before it started\n${stderr.slice(-3000)}`),
  );
  return { proc, id: started.value, stderr: started.stderr };
}
