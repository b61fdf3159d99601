// Load on a running `wmark serve` while one of its dependencies is stopped: each kind of request in its own loop, every
// answer timed, and a request with no answer within HUNG_MS counted as hung. The tests then ask what the samples of a
// time window say (the slowest answer, the statuses and codes of each kind, /readyz).
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FFMPEG } from '../../harness/tools.js';

/** A request with no answer after this long is hung: the client cannot tell it from a dead server. */
const HUNG_MS = 15_000;

export interface Probe {
  kind: string;
  method: string;
  /** A path on the serve, or an absolute URL (a signed link); a function is asked before each request. */
  target: string | (() => string);
  headers?: Record<string, string>;
  /** Sent as JSON; a function is asked before each request (a new watermark each time). */
  body?: unknown;
  /** The pause after each answer (default: the load's). */
  pauseMs?: number;
  /** Hears each answer's status and text (to learn links from it). */
  onAnswer?: (status: number, text: string) => void;
}

export interface Sample {
  kind: string;
  /** What was sent: the request can be sent again as it was. */
  method: string;
  url: string;
  body?: unknown;
  start: number;
  ms: number;
  /** Undefined when hung or when the connection failed. */
  status?: number;
  code?: string;
  retryAfter?: string | null;
  hung?: boolean;
  error?: string;
}

export interface Load {
  samples: Sample[];
  stop(): Promise<void>;
}

/** Runs every probe in its own loop, one request at a time, `pauseMs` between them, until stopped; hung after `hungMs`. */
export function startLoad(base: string, probes: Probe[], pauseMs = 100, hungMs = HUNG_MS): Load {
  const samples: Sample[] = [];
  let running = true;
  const loop = async (probe: Probe) => {
    while (running) {
      const target = typeof probe.target === 'function' ? probe.target() : probe.target;
      const url = /^https?:/.test(target) ? target : base + target;
      const body = typeof probe.body === 'function' ? (probe.body as () => unknown)() : probe.body;
      const start = Date.now();
      const sample: Sample = { kind: probe.kind, method: probe.method, url, ...(body === undefined ? {} : { body }), start, ms: 0 };
      try {
        const res = await fetch(url, {
          method: probe.method,
          headers: { ...probe.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(hungMs),
        });
        const text = await res.text();
        probe.onAnswer?.(res.status, text);
        sample.status = res.status;
        sample.retryAfter = res.headers.get('retry-after');
        try {
          sample.code = (JSON.parse(text) as { code?: string }).code;
        } catch {
          // not JSON (a segment, a playlist)
        }
      } catch (error) {
        if ((error as Error).name === 'TimeoutError') sample.hung = true;
        else sample.error = (error as Error).message;
      }
      sample.ms = Date.now() - start;
      samples.push(sample);
      await new Promise((r) => setTimeout(r, probe.pauseMs ?? pauseMs));
    }
  };
  const loops = probes.map(loop);
  return {
    samples,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** The samples of requests started in [from, to). */
export function startedBetween(samples: readonly Sample[], from: number, to: number): Sample[] {
  return samples.filter((s) => s.start >= from && s.start < to);
}

/** Statuses (and codes) each kind answered with, for a readable failure message: `kind: 503 QUEUE_UNAVAILABLE x4`. */
export function summary(samples: readonly Sample[]): Record<string, string[]> {
  const out: Record<string, Map<string, number>> = {};
  for (const s of samples) {
    const label = s.hung ? 'hung' : s.error ? `error ${s.error}` : `${s.status}${s.code ? ` ${s.code}` : ''}`;
    out[s.kind] ??= new Map();
    out[s.kind]!.set(label, (out[s.kind]!.get(label) ?? 0) + 1);
  }
  return Object.fromEntries(Object.entries(out).map(([k, m]) => [k, [...m].map(([l, n]) => `${l} x${n}`)]));
}

/**
 * An ffmpeg stand-in for a worker: logs each call, sleeps before each segment render (so jobs are caught mid-way), runs
 * the real one, and logs which output it finished: a segment rendered twice would show twice.
 */
export function slowWorkerFfmpeg(dir: string, name: string, sleepSeconds: number): { ffmpeg: string; log: string } {
  const file = path.join(dir, `${name}.sh`);
  const log = path.join(dir, `${name}.log`);
  writeFileSync(
    file,
    [
      '#!/bin/sh',
      `printf 'start %s\\n' "$*" >> '${log}'`,
      // Waited on in the background, so a SIGTERM (the worker stopping a task) is heard at once and reaches ffmpeg.
      `trap 'kill -TERM $child 2>/dev/null; exit 143' TERM INT`,
      `case "$*" in *filter_script*) sleep ${sleepSeconds} & child=$!; wait $child;; esac`,
      `'${FFMPEG}' "$@" & child=$!`,
      'wait $child || exit $?',
      `case "$*" in *filter_script*) printf 'finished\\n' >> '${log}';; esac`,
      '',
    ].join('\n'),
  );
  chmodSync(file, 0o755);
  return { ffmpeg: file, log };
}

/** How many segment renders each worker finished (one line per finished render in its ffmpeg log). */
export function finishedRenders(log: string): number {
  return existsSync(log)
    ? readFileSync(log, 'utf8')
        .split('\n')
        .filter((l) => l === 'finished').length
    : 0;
}

/** Segment renders a worker started (whether or not they finished). */
export function startedRenders(log: string): number {
  return existsSync(log)
    ? readFileSync(log, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('start ') && l.includes('filter_script')).length
    : 0;
}
