// A throwaway redis-server (Debian's package, installed by scripts/test.sh) on a free loopback port, with no
// persistence, in its own temp folder: each test file starts its own and stops it.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.js';
import { launchOnFreePort, untilReady } from './server-process.js';
import { stopProcess } from './stop-process.js';

const REDIS_SERVER = process.env.WMARK_REDIS_SERVER ?? 'redis-server';

export interface TestRedis {
  host: string;
  port: number;
  /** redis://127.0.0.1:PORT */
  url: string;
  /** Stops the server; with `restart`, starts an empty one again on the same port (a Redis restart mid-job). */
  stop(): Promise<void>;
  restart(): Promise<void>;
  /** SIGKILLs the server (no goodbye to its clients) and leaves the port closed until `restart`. */
  kill(): Promise<void>;
  /** Everything the server logged (stdout), for a failing test's message. */
  log(): string;
  /** The running redis-server (a new one after `restart`), for its CPU time or an emergency kill. */
  readonly process: ChildProcess | undefined;
}

export async function startRedis(): Promise<TestRedis> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'wmark-redis-'));
  let port = await freePort();
  let child: ChildProcess | undefined;
  let output = '';

  const launch = async (): Promise<void> => {
    const proc = spawn(
      REDIS_SERVER,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no', '--loglevel', 'notice'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = proc;
    await untilReady(proc, {
      name: 'redis-server',
      ready: 'Ready to accept connections',
      timeoutMs: 10_000,
      log: (chunk) => (output += chunk),
      cannotRun: (message) => `cannot run ${REDIS_SERVER} (scripts/test.sh installs Debian's redis-server): ${message}`,
    });
  };

  const stopChild = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<void> => {
    const proc = child;
    child = undefined;
    await stopProcess(proc, { signal, graceMs: 5_000 });
  };

  // A port taken between freePort() and the server's bind: try another.
  port = await launchOnFreePort(port, {
    launch: async (p) => {
      port = p;
      await launch();
    },
    failed: stopChild,
    portTaken: () => /Address already in use/.test(output),
    gaveUp: () => rmSync(dir, { recursive: true, force: true }),
  });

  return {
    host: '127.0.0.1',
    get port() {
      return port;
    },
    get url() {
      return `redis://127.0.0.1:${port}`;
    },
    log: () => output,
    get process() {
      return child;
    },
    restart: async () => {
      await stopChild();
      await launch();
    },
    kill: () => stopChild('SIGKILL'),
    stop: async () => {
      await stopChild();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
