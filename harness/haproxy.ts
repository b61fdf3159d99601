// A throwaway HAProxy (Debian's package, installed by scripts/test.sh) on a free loopback port in front of `wmark
// serve` instances, run from the sample docs/haproxy.cfg with only its bind address and server lines changed, so the
// sample stays true. It runs in the foreground in a temp folder of its own, as this user (as `nobody` under root), and
// the kernel kills it when the test process ends, however that ends. Its stats socket tells each instance's state and
// the requests it is passing on.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { REPO } from './fixtures.js';
import { freePort } from './free-port.js';
import { asUnprivileged, giveToUnprivileged, launchOnFreePort } from './server-process.js';
import { type Started, startProcess } from './start-process.js';

const HAPROXY = process.env.WMARK_HAPROXY ?? (existsSync('/usr/sbin/haproxy') ? '/usr/sbin/haproxy' : 'haproxy');
export const HAPROXY_SAMPLE = path.join(REPO, 'docs', 'haproxy.cfg');

/** What the sample leaves to Debian's haproxy.cfg, for a test: a log on stdout and a stats socket to ask. */
const preamble = (statsSocket: string) => `global
    log stdout format raw local0
    stats socket ${statsSocket} mode 600 level admin

defaults
    log global
    mode http
    option httplog
    option dontlognull
    timeout connect 5s
    timeout client 50s
    timeout server 50s

`;

/**
 * The sample with the frontend bound to 127.0.0.1:`port` and one server line per backend port (wmark1, wmark2, …, on
 * 127.0.0.1, with the options of the sample's first server line), after a test's global and defaults sections.
 */
function haproxyConfig(sample: string, options: { port: number; backends: readonly number[]; statsSocket: string }): string {
  const binds = [...sample.matchAll(/^(\s*)bind :80$/gm)];
  const servers = [...sample.matchAll(/^(\s*)server wmark\d+ \S+(.*)$/gm)];
  if (binds.length !== 1 || servers.length === 0) throw new Error(`${HAPROXY_SAMPLE} has no single "bind :80" line, or no "server wmarkN" line`);
  const [, indent, extra] = servers[0]!;
  const lines = options.backends.map((port, i) => `${indent}server wmark${i + 1} 127.0.0.1:${port}${extra}`).join('\n');
  let first = true;
  const body = sample.replace(/^(\s*)bind :80$/m, `$1bind 127.0.0.1:${options.port}`).replace(/^(\s*)server wmark\d+ \S+(.*)\n?/gm, () => {
    if (!first) return '';
    first = false;
    return `${lines}\n`;
  });
  return preamble(options.statsSocket) + body;
}

interface ServerState {
  /** HAProxy's word for it: UP, DOWN, "UP 1/2" (going down), "DOWN 1/2" (coming up), MAINT… */
  status: string;
  /** Requests (sessions) it has been sent in all. */
  sessions: number;
  /** Connections to it that failed and were tried again (on it or, redispatched, on another). */
  retries: number;
  /** Requests taken from it to another server after a failure. */
  redispatches: number;
  /** The last health check's result (L7OK, L4CON…). */
  check: string;
}

/** A request HAProxy is passing to a server now. */
export interface Stream {
  server: string;
  method: string;
  /** The request is sent whole and no byte of the answer has come back. */
  waiting: boolean;
}

/** HAProxy's methods by the number `show sess` gives them. */
const METHODS = ['OPTIONS', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'TRACE', 'CONNECT'];

export interface TestHaproxy {
  port: number;
  /** http://127.0.0.1:PORT, the frontend. */
  url: string;
  /** The configuration it runs. */
  config: string;
  /** Each backend server by name (wmark1, wmark2, …). */
  servers(): Promise<Record<string, ServerState>>;
  /** The requests it is passing to a server now. */
  streams(): Promise<Stream[]>;
  /** Waits until `ready` holds for the servers' states; throws with the last states and the log after `timeoutMs`. */
  untilServers(ready: (servers: Record<string, ServerState>) => boolean, what: string, timeoutMs?: number): Promise<Record<string, ServerState>>;
  /** Everything it logged (one line per request, health check changes, alerts). */
  log(): string;
  stop(): Promise<void>;
}

/** The wmark backend's servers from `show stat`'s CSV: each one's state, sessions, retries and check. */
function serverStates(csv: string): Record<string, ServerState> {
  const [head, ...rows] = csv.split('\n').filter((l) => l.trim() !== '');
  const columns = head!.replace(/^#\s*/, '').split(',');
  const at = (row: string[], name: string) => row[columns.indexOf(name)] ?? '';
  const out: Record<string, ServerState> = {};
  for (const line of rows) {
    const row = line.split(',');
    if (at(row, 'pxname') !== 'wmark' || ['FRONTEND', 'BACKEND'].includes(at(row, 'svname'))) continue;
    out[at(row, 'svname')] = {
      status: at(row, 'status'),
      sessions: Number(at(row, 'stot')),
      retries: Number(at(row, 'wretr')),
      redispatches: Number(at(row, 'wredis')),
      check: at(row, 'check_status'),
    };
  }
  return out;
}

/** The requests passed to a server now, from `show sess all`: which server, the method, and whether it waits on the answer. */
function streamsOf(text: string): Stream[] {
  return text.split(/\n(?=0x[0-9a-f]+: )/).flatMap((block) => {
    const server = /\n\s*server=(\S+)/.exec(block)?.[1];
    const method = /\bmeth=(\d+)/.exec(block)?.[1];
    if (server === undefined || server === '<NONE>' || method === undefined) return [];
    return [{ server, method: METHODS[Number(method)] ?? 'OTHER', waiting: /\breq\.st=MSG_DONE rsp\.st=MSG_RPBEFORE\b/.test(block) }];
  });
}

/** Starts HAProxy in front of these ports (`port`: the frontend's, which a caller may have promised as a public URL). */
export async function startHaproxy(options: { backends: readonly number[]; port?: number }): Promise<TestHaproxy> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'wmark-haproxy-'));
  const statsSocket = path.join(dir, 'admin.sock');
  const configFile = path.join(dir, 'haproxy.cfg');
  const sample = readFileSync(HAPROXY_SAMPLE, 'utf8');
  giveToUnprivileged(dir);
  let port = options.port ?? (await freePort());
  let server: Started | undefined;
  let output = '';
  let config = '';

  const launch = async (p: number): Promise<void> => {
    port = p;
    config = haproxyConfig(sample, { port, backends: options.backends, statsSocket });
    writeFileSync(configFile, config, { mode: 0o644 });
    giveToUnprivileged(configFile);
    const [command, args] = asUnprivileged(HAPROXY, ['-db', '-f', configFile], { diesWithParent: true });
    server = startProcess({
      name: 'haproxy',
      command,
      args,
      // Up once its stats socket answers (it binds the frontend before).
      ready: {
        probe: () =>
          stats(statsSocket, 'show info').then(
            () => true,
            () => false,
          ),
        everyMs: 50,
        what: 'its stats socket to answer',
      },
      timeoutMs: 10_000,
      hint: "scripts/test.sh installs Debian's haproxy",
      onOutput: (chunk) => (output += chunk),
      stop: { graceMs: 5_000 },
    });
    await server.ready;
  };

  const stopChild = async (): Promise<void> => {
    const running = server;
    server = undefined;
    await running?.stop();
  };

  if (options.port === undefined) {
    await launchOnFreePort(port, {
      launch,
      failed: stopChild,
      portTaken: () => /cannot bind socket|Address already in use/i.test(output),
      gaveUp: () => rmSync(dir, { recursive: true, force: true }),
    });
  } else {
    // A promised port is not swapped for another: the caller's links name it.
    await launch(port).catch(async (error: unknown) => {
      await stopChild();
      rmSync(dir, { recursive: true, force: true });
      throw error;
    });
  }

  const servers = async (): Promise<Record<string, ServerState>> => serverStates(await stats(statsSocket, 'show stat'));
  const streams = async (): Promise<Stream[]> => streamsOf(await stats(statsSocket, 'show sess all'));

  return {
    get port() {
      return port;
    },
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    get config() {
      return config;
    },
    servers,
    streams,
    async untilServers(ready, what, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const states = await servers();
        if (ready(states)) return states;
        if (Date.now() > deadline) throw new Error(`haproxy: timed out waiting for ${what}: ${JSON.stringify(states)}\n${output}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    log: () => output,
    stop: async () => {
      await stopChild();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One command on HAProxy's stats socket (non-interactive: it answers and closes). */
function stats(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const c = net.connect(socket, () => c.end(`${command}\n`));
    c.setEncoding('utf8');
    c.on('data', (d: string) => (text += d));
    c.once('error', reject);
    c.once('close', () => resolve(text));
  });
}
