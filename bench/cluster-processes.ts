// The cluster suite's processes: wmark serve started on a fresh data folder with its credential read, and stopping
// every process it started whatever happens (failure, Ctrl-C, SIGTERM), the ffmpegs they left included.
import type { ChildProcess } from 'node:child_process';
import { startProcess } from '../harness/start-process.js';
import { stopProcess } from '../harness/stop-process.js';
import type { Bench } from './cluster-setup.js';
import { descendants } from './lib/server-process.js';
import { WMARK_BIN } from './lib/suite.js';

/** Things to stop, newest first; each runs once. */
export class Cleanup {
  private readonly steps: { name: string; run: () => Promise<void> }[] = [];
  readonly processes = new Set<ChildProcess>();

  add(name: string, run: () => Promise<void>): void {
    this.steps.push({ name, run });
  }

  track(proc: ChildProcess): void {
    this.processes.add(proc);
  }

  async run(log: (m: string) => void): Promise<void> {
    for (const step of this.steps.splice(0).reverse()) {
      await step.run().catch((error: unknown) => log(`cleanup: ${step.name}: ${(error as Error).message}`));
    }
    this.killAll();
  }

  /** Last resort (also on process exit): SIGKILL whatever still lives, with its ffmpegs. */
  killAll(): void {
    for (const p of this.processes) {
      if (p.exitCode !== null || p.signalCode !== null || p.pid === undefined) continue;
      for (const d of descendants(p.pid)) {
        try {
          process.kill(d, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      p.kill('SIGKILL');
    }
  }
}

/** Stops a wmark process (SIGTERM, SIGKILL after the grace), then any ffmpeg it left behind. */
export async function stopWmark(proc: ChildProcess, graceMs: number): Promise<void> {
  const kids = proc.pid !== undefined ? descendants(proc.pid) : [];
  await stopProcess(proc, { graceMs });
  for (const d of kids) {
    try {
      process.kill(d, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

export interface ServeProcess {
  label: string;
  proc: ChildProcess;
  url: string;
  dataDir: string;
  headers: Record<string, string>;
  stderr: () => string;
}

/** serve ended before it printed its URL (e.g. a flag this build does not know). */
export class ServeExited extends Error {
  constructor(
    readonly code: number | null,
    readonly stderrText: string,
  ) {
    super(`wmark serve exited with code ${code} before printing its URL\n${stderrText.slice(-3000)}`);
  }
}

/** `wmark serve --render full` on a fresh data folder; resolves with its URL and the credential it created. */
export async function startServe(b: Bench, label: string, dataDir: string, extra: string[], env: NodeJS.ProcessEnv): Promise<ServeProcess> {
  const args = [WMARK_BIN, '--data-dir', dataDir, '--json', 'serve', '--host', '127.0.0.1', '--port', '0', '--render', 'full', ...extra];
  const serve = startProcess({
    name: label,
    command: process.execPath,
    args,
    cwd: b.cwd,
    env,
    ready: { line: /^(\{.*"url".*)$/, what: 'its URL (a JSON line on stdout)' },
    timeoutMs: 60_000,
    keep: 50_000,
  });
  const proc = serve.proc;
  b.cleanup.track(proc);
  b.cleanup.add(label, () => stopWmark(proc, 10_000));
  const [line] = await serve.ready.catch((error: unknown) => {
    // Ended before its URL (a flag this build does not know): its output says why, a usage error's JSON line first.
    if (proc.exitCode !== null) throw new ServeExited(proc.exitCode, `${serve.stdout()}${serve.stderr()}`);
    throw error;
  });
  const url = (JSON.parse(line!) as { url: string }).url;
  const err = serve.stderr();
  const clientId = /client id:\s+(wmc_\S+)/.exec(err)?.[1];
  const apiKey = /API key:\s+(wmk_\S+)/.exec(err)?.[1];
  if (!clientId || !apiKey) throw new Error(`${label}: no credential in its first start's output\n${err.slice(-2000)}`);
  return { label, proc, url: url.replace(/\/+$/, ''), dataDir, headers: { 'x-api-client-id': clientId, 'x-api-key': apiKey }, stderr: () => serve.stderr() };
}
