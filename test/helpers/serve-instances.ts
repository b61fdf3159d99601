// Several `wmark serve` processes at once, as behind a load balancer: each spawned (spawnServe) on a free loopback
// port, one after another so the first makes the API key the others then find, and each ready once /readyz answers
// 200. One can be stopped (SIGTERM: a graceful stop) and started again on its port; all are killed at the end.
import { freePort } from '../../harness/free-port.js';
import { call, type SpawnedServe, spawnServe, waitFor } from '../../harness/serve-helpers.js';
import { launchOnFreePort } from '../../harness/server-process.js';

interface ServeInstance {
  port: number;
  /** http://127.0.0.1:PORT, where it listens. */
  url: string;
  /** The running process (a new one after `start`). */
  proc: SpawnedServe;
}

export interface ServeInstances {
  instances: ServeInstance[];
  /** The key pair the first serve printed when it made the data's first key; undefined when there was one already. */
  credentials?: { clientId: string; apiKey: string };
  /** Everything instance `i` has written to stderr, over all its runs. */
  stderr(i: number): string;
  /** SIGTERM to instance `i`, and waits until it has exited. */
  stop(i: number): Promise<void>;
  /** Starts instance `i` again on its port, and waits until it is ready. */
  start(i: number): Promise<void>;
  /** SIGKILLs every instance still running and waits for each (a test's teardown, pass or fail). */
  stopAll(): Promise<void>;
}

export interface ServeInstancesOptions {
  /** The data folder of instance `i` (the same for all of them to share one). */
  dataDir: (i: number) => string;
  /** `serve`'s arguments besides --port. */
  args: (i: number) => string[];
  env?: Record<string, string>;
}

export async function startServeInstances(count: number, options: ServeInstancesOptions): Promise<ServeInstances> {
  const instances: ServeInstance[] = [];
  const earlier: string[] = Array(count).fill('');
  /** The serve spawned last, for why it failed. */
  let latest: SpawnedServe | undefined;

  const spawnOn = async (i: number, port: number): Promise<ServeInstance> => {
    const proc = spawnServe(options.dataDir(i), ['--port', String(port), ...options.args(i)], options.env);
    latest = proc;
    try {
      const url = await proc.url;
      await waitFor(
        async () => ((await call(url, 'GET', '/readyz').catch(() => undefined))?.status === 200 ? true : undefined),
        `serve ${i + 1} to be ready`,
        30_000,
      );
      return { port, url, proc };
    } catch (error) {
      await killed(proc);
      throw error;
    }
  };

  try {
    for (let i = 0; i < count; i++) {
      let started: ServeInstance | undefined;
      // A port taken between freePort() and serve's bind: another one.
      await launchOnFreePort(await freePort(), {
        launch: async (port) => {
          started = await spawnOn(i, port);
        },
        failed: async () => {},
        portTaken: () => /PORT_IN_USE|already in use/.test(latest?.stderr() ?? ''),
        gaveUp: () => {},
      });
      instances.push(started!);
    }
  } catch (error) {
    await Promise.all(instances.map((s) => killed(s.proc)));
    throw error;
  }

  const first = instances[0]!.proc.stderr();
  const clientId = /client id:\s+(wmc_\S+)/.exec(first)?.[1];
  const apiKey = /API key:\s+(wmk_\S+)/.exec(first)?.[1];
  return {
    instances,
    ...(clientId && apiKey ? { credentials: { clientId, apiKey } } : {}),
    stderr: (i) => earlier[i]! + instances[i]!.proc.stderr(),
    async stop(i) {
      const { proc } = instances[i]!;
      proc.kill('SIGTERM');
      await proc.exited;
    },
    async start(i) {
      const old = instances[i]!;
      earlier[i] += old.proc.stderr();
      instances[i] = await spawnOn(i, old.port);
    },
    async stopAll() {
      await Promise.all(instances.map((s) => killed(s.proc)));
    },
  };
}

async function killed(proc: SpawnedServe): Promise<void> {
  proc.kill('SIGKILL');
  await proc.exited;
}
