// A throwaway redis-server (Debian's package, installed by scripts/test.sh) on a free loopback port, with no
// persistence, in its own temp folder: each test file starts its own and stops it.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.js';
import { launchOnFreePort } from './server-process.js';
import { type Started, startProcess } from './start-process.js';

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
  let server: Started | undefined;
  let output = '';

  const launch = async (): Promise<void> => {
    server = startProcess({
      name: 'redis-server',
      command: REDIS_SERVER,
      args: ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no', '--loglevel', 'notice'],
      ready: { line: /Ready to accept connections/, stream: 'either' },
      timeoutMs: 10_000,
      hint: "scripts/test.sh installs Debian's redis-server",
      onOutput: (chunk) => (output += chunk),
      stop: { graceMs: 5_000 },
    });
    await server.ready;
  };

  const stopChild = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<void> => {
    const running = server;
    server = undefined;
    await running?.stop({ signal });
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
      return server?.proc;
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
