// A throwaway PostgreSQL 15 cluster (Debian's `postgresql` package, installed by scripts/test.sh): initdb in a temp
// folder, one server on a free loopback port with password authentication, a fresh database per test. Each test file
// starts its own and stops it. initdb and postgres refuse to run as root, so as root they run as `nobody`.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.js';
import { asUnprivileged, giveToUnprivileged, launchOnFreePort } from './server-process.js';
import { type Started, startProcess } from './start-process.js';

const PG_BIN = process.env.WMARK_PG_BIN ?? '/usr/lib/postgresql/15/bin';

function binary(name: string): string | undefined {
  const inDir = path.join(PG_BIN, name);
  if (existsSync(inDir)) return inDir;
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : undefined;
}

/** Why the PostgreSQL tests cannot run here (no binaries), or undefined when they can. */
export const POSTGRES_MISSING: string | undefined =
  binary('initdb') && binary('postgres')
    ? undefined
    : `PostgreSQL's initdb/postgres not found in ${PG_BIN} or on PATH (scripts/test.sh installs Debian's postgresql)`;
if (POSTGRES_MISSING) console.warn(`skipping the PostgreSQL tests: ${POSTGRES_MISSING}`);

export interface TestPostgres {
  port: number;
  user: string;
  password: string;
  /** postgres://USER:PASSWORD@127.0.0.1:PORT/DATABASE for a database (default: the maintenance one). */
  url(database?: string): string;
  /** A new empty database, and its URL. */
  createDatabase(): Promise<string>;
  /** Runs SQL as the superuser on a database, through the driver, and returns the rows. */
  query<T = Record<string, unknown>>(url: string, sql: string, params?: unknown[]): Promise<T[]>;
  /** Shuts the server down (fast shutdown: clients are cut off), keeping its data, as an outage would. */
  halt(): Promise<void>;
  /** Starts it again after halt(), on the same port with the same data. */
  restart(): Promise<void>;
  /**
   * Kills every process of the server at once (SIGKILL), as a crash would: no shutdown, connections cut, transactions
   * in flight lost. restart() brings it back through crash recovery, on the same port with the same data.
   */
  kill(): Promise<void>;
  /** Stops every process of the server (SIGSTOP): connections stay open and nothing answers, as on a hung host. */
  freeze(): void;
  /** Lets a frozen server run on (SIGCONT). */
  thaw(): void;
  stop(): Promise<void>;
  log(): string;
  /** The postmaster's pid (from its pid file): the root of every server process, backends included. */
  serverPid(): number;
}

let databases = 0;

const postmasterPid = (data: string) => Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);

/** The postmaster's pid (from its pid file), then its children's. */
function serverPids(data: string): number[] {
  const main = postmasterPid(data);
  const children = spawnSync('pgrep', ['-P', String(main)], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter(Boolean)
    .map(Number);
  return [main, ...children];
}

/** A new cluster in `dir`/data, owned by the unprivileged user when run as root: a user with a random password. */
function initDataDir(dir: string): { data: string; user: string; password: string } {
  const data = path.join(dir, 'data');
  const user = 'wmark';
  const password = randomBytes(12).toString('hex');
  const pwfile = path.join(dir, 'pw');
  writeFileSync(pwfile, `${password}\n`);
  giveToUnprivileged(dir, pwfile);
  chmodSync(dir, 0o700);
  const [initCmd, initArgs] = asUnprivileged(binary('initdb')!, [
    '-D',
    data,
    '-U',
    user,
    '--pwfile',
    pwfile,
    '--auth=scram-sha-256',
    '-E',
    'UTF8',
    '--no-sync',
  ]);
  const init = spawnSync(initCmd, initArgs, { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb failed:\n${init.stdout}${init.stderr}`);
  return { data, user, password };
}

/** The server's arguments: loopback and a socket in `socketDir` only, and the durability and statistics asked for. */
function serverArgs(data: string, port: number, socketDir: string, options: { durableCommits?: boolean; statementStats?: boolean }): string[] {
  return [
    '-D',
    data,
    '-p',
    String(port),
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    `unix_socket_directories=${socketDir}`,
    '-c',
    'fsync=off',
    '-c',
    `synchronous_commit=${options.durableCommits ? 'on' : 'off'}`,
    '-c',
    'full_page_writes=off',
    '-c',
    'max_connections=200',
    ...(options.statementStats
      ? ['-c', 'shared_preload_libraries=pg_stat_statements', '-c', 'pg_stat_statements.track_utility=on', '-c', 'pg_stat_statements.track_planning=on']
      : []),
  ];
}

/**
 * `durableCommits`: a commit returns only once its WAL is written out, as on a production server. The default trades
 * that for speed (a commit may be lost if the server dies within a fraction of a second), which only a test that kills
 * the server must not do: a row acknowledged and then lost is not what it tests. `statementStats`: the server loads
 * pg_stat_statements, so a benchmark can count the statements each call costs (after CREATE EXTENSION).
 */
export async function startPostgres(options: { durableCommits?: boolean; statementStats?: boolean } = {}): Promise<TestPostgres> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'wmark-pg-'));
  const { data, user, password } = initDataDir(dir);

  let port = await freePort();
  let server: Started | undefined;
  let output = '';
  const launch = async (): Promise<void> => {
    const [command, args] = asUnprivileged(binary('postgres')!, serverArgs(data, port, dir, options));
    server = startProcess({
      name: 'postgres',
      command,
      args,
      ready: { line: /database system is ready to accept connections/, stream: 'either' },
      timeoutMs: 30_000,
      onOutput: (chunk) => (output += chunk),
      // SIGINT: PostgreSQL's fast shutdown (clients disconnected, no waiting for them).
      stop: { signal: 'SIGINT', graceMs: 10_000 },
    });
    await server.ready;
  };
  const stopChild = async (): Promise<void> => {
    const running = server;
    server = undefined;
    await running?.stop();
  };
  port = await launchOnFreePort(port, {
    launch: async (p) => {
      port = p;
      output = '';
      await launch();
    },
    failed: stopChild,
    portTaken: () => /could not bind|Address already in use/.test(output),
    gaveUp: () => rmSync(dir, { recursive: true, force: true }),
  });

  const url = (database = 'postgres') => `postgres://${user}:${password}@127.0.0.1:${port}/${database}`;
  const query = async <T>(target: string, sql: string, params: unknown[] = []): Promise<T[]> => {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: target });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows as T[];
    } finally {
      await client.end();
    }
  };
  return {
    get port() {
      return port;
    },
    user,
    password,
    url,
    query,
    createDatabase: async () => {
      const name = `t${process.pid}_${++databases}_${randomBytes(3).toString('hex')}`;
      await query(url(), `CREATE DATABASE ${name}`);
      return url(name);
    },
    log: () => output,
    serverPid: () => postmasterPid(data),
    // The postmaster first, so it forks no new backend while they are stopped; woken in the other order.
    freeze: () => {
      for (const pid of serverPids(data)) process.kill(pid, 'SIGSTOP');
    },
    thaw: () => {
      for (const pid of serverPids(data).reverse()) process.kill(pid, 'SIGCONT');
    },
    kill: async () => {
      const exited = server?.exited;
      server = undefined;
      const pids = serverPids(data);
      for (const pid of pids) process.kill(pid, 'SIGKILL');
      await exited;
      // Its children too (gone, or a zombie nobody reaps, which holds nothing): a new server then starts cleanly.
      const alive = (pid: number) => {
        try {
          return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
        } catch {
          return false;
        }
      };
      const end = Date.now() + 10_000;
      while (pids.some(alive) && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 20));
    },
    halt: stopChild,
    restart: launch,
    stop: async () => {
      await stopChild();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
