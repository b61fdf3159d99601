// Where one `wmark serve` spends its CPU over a capacity trial (band-capacity's --capacity-split): serve's own Node
// process (/proc/<pid>/stat: its user and system time), each kind of child it starts (the ffmpeg and x264 wrappers'
// log, bench/lib/child-cpu.ts), what its reaped children used beyond those (the wrappers' bash), the machine's busy
// cores, how many renders ran at once and how many waited (serve's /metrics, sampled once a second).
import { readFile, stat } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { CHILD_KINDS, type ChildKind, type ChildRun, concurrency, type KindTotals, parseChildLog, totalsByKind } from './child-cpu.js';
import { machineBusySeconds } from './measure.js';
import { clockTick, parseStat } from './process-cpu.js';
import { fmt, table } from './suite.js';

const SAMPLE_MS = 1000;

export interface TrialSplit {
  viewers: number;
  /** Seconds of video the trial's viewers played (viewers x title). */
  videoS: number;
  /** From the first viewer's POST to the last viewer's last segment. */
  wallS: number;
  /** serve's own process (Node: HTTP, splice, scheduling, state; its GC and libuv threads included). */
  nodeS: number;
  /** What serve's reaped children used in all (the wrappers around each run included). */
  childrenS: number;
  kinds: Map<ChildKind, KindTotals>;
  /** Busy CPU seconds of the whole machine over the trial (serve's, and other processes'). */
  machineS: number;
  /** Draw and band-encode (or full-render) processes running at once over the trial. */
  running: { mean: number; idleShare: number; fullShare: number };
  /** Renders waiting in serve's scheduler (all urgencies; `now`: a player waits for it) and running, from /metrics. */
  waiting: { mean: number; max: number };
  waitingNow: { mean: number; max: number };
  inFlight: { mean: number; max: number };
  /** Each second: renders waiting (all, and those a player waits for), running, and serve's CPU seconds so far (children that ended included). */
  timeline: { t: number; waiting: number; now: number; inFlight: number; cpuS: number }[];
  /** Renders running in the samples where some waited. */
  inFlightWhileWaiting: { mean: number; max: number };
}

async function processTicks(pid: number): Promise<{ self: number; children: number }> {
  const s = parseStat(await readFile(`/proc/${pid}/stat`, 'utf8'));
  return { self: (s.utime + s.stime) * clockTick(), children: (s.cutime + s.cstime) * clockTick() };
}

const gauge = (text: string, name: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith(name))
    .reduce((a, l) => a + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);

/** Starts measuring serve (pid, URL) for a trial; `end` stops the window at the last segment, `finish` once serve is idle. */
export async function startSplit(
  pid: number,
  url: string,
  log: string,
): Promise<{ end: () => void; finish: (viewers: number, titleS: number) => Promise<TrialSplit> }> {
  const offset = (await stat(log)).size;
  const before = await processTicks(pid);
  const busy0 = machineBusySeconds();
  const t0 = performance.now();
  const epoch0 = Date.now() / 1000;
  let endS: number | undefined;
  const samples: { t: number; waiting: number; now: number; inFlight: number; cpuS: number }[] = [];
  const timer = setInterval(() => {
    if (endS !== undefined) return;
    const t = (performance.now() - t0) / 1000;
    const cpu = processTicks(pid).then(
      (p) => p.self + p.children,
      () => NaN,
    );
    fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5000) })
      .then((r) => r.text())
      .then(async (text) =>
        samples.push({
          t,
          cpuS: await cpu,
          waiting: gauge(text, 'wmark_renders_waiting{'),
          now: gauge(text, 'wmark_renders_waiting{urgency="now"}'),
          inFlight: gauge(text, 'wmark_renders_in_flight '),
        }),
      )
      .catch(() => undefined);
  }, SAMPLE_MS);
  let busyEnd = NaN;
  return {
    end: () => {
      endS = (performance.now() - t0) / 1000;
      busyEnd = machineBusySeconds();
      clearInterval(timer);
    },
    finish: async (viewers, titleS) => {
      clearInterval(timer);
      const wallS = endS ?? (performance.now() - t0) / 1000;
      const after = await processTicks(pid);
      const text = (await readFile(log)).subarray(offset).toString('utf8');
      const runs = parseChildLog(text);
      const renders = runs.filter((r: ChildRun) => r.args.includes('-filter_script:v') || r.args.includes('--band-self') || r.args.includes('libx264'));
      const stats = (xs: number[]) => ({ mean: xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN, max: xs.length ? Math.max(...xs) : NaN });
      return {
        viewers,
        videoS: viewers * titleS,
        wallS,
        nodeS: after.self - before.self,
        childrenS: after.children - before.children,
        kinds: totalsByKind(runs),
        machineS: (Number.isNaN(busyEnd) ? machineBusySeconds() : busyEnd) - busy0,
        running: concurrency(renders, epoch0, epoch0 + wallS, 2),
        waiting: stats(samples.map((s) => s.waiting)),
        waitingNow: stats(samples.map((s) => s.now)),
        inFlight: stats(samples.map((s) => s.inFlight)),
        inFlightWhileWaiting: stats(samples.filter((s) => s.waiting > 0).map((s) => s.inFlight)),
        timeline: samples.sort((a, b) => a.t - b.t),
      };
    },
  };
}

/** One trial's split: each part's CPU seconds per second of video per viewer, its share, and the wall figures. */
export function splitReport(label: string, s: TrialSplit): string[] {
  const perViewerS = (cpu: number) => cpu / s.videoS;
  const kindsS = [...s.kinds.values()].reduce((a, k) => a + k.cpuS, 0);
  const total = s.nodeS + s.childrenS;
  const rows: (string | number)[][] = [['serve (Node)', '', perViewerS(s.nodeS), (100 * s.nodeS) / total]];
  for (const kind of CHILD_KINDS) {
    const k = s.kinds.get(kind);
    if (!k) continue;
    const stopped = k.stopped ? `${k.runs} (${k.stopped} stopped, ${fmt(k.stoppedCpuS)} CPU s)` : String(k.runs);
    rows.push([kind, stopped, perViewerS(k.cpuS), (100 * k.cpuS) / total]);
  }
  rows.push(['wrappers, unaccounted', '', perViewerS(s.childrenS - kindsS), (100 * (s.childrenS - kindsS)) / total]);
  rows.push(['all', '', perViewerS(total), 100]);
  const perViewer = perViewerS(total);
  return [
    '',
    `${label}: ${s.viewers} viewers, ${fmt(s.videoS, 0)} s of video in ${fmt(s.wallS, 1)} s wall`,
    table(['part', 'runs', 'CPU s per s of video per viewer', 'share %'], rows, [undefined, undefined, 4, 1]),
    `  2 cores / ${fmt(perViewer, 4)} CPU s per viewer-second = ${fmt(2 / perViewer, 1)} real-time viewers if CPU were all that counted`,
    `  serve used ${fmt(total / s.wallS)} cores over the trial (the machine ${fmt(s.machineS / s.wallS)}, other processes included); renders (draw, band encode, full) running at once: mean ${fmt(s.running.mean)}, none ${fmt(100 * s.running.idleShare, 0)} % of the time, 2 or more ${fmt(100 * s.running.fullShare, 0)} %`,
    `  each second, waiting (player) / running / serve's cores: ${s.timeline
      .map((x, i) => `${x.waiting}(${x.now})/${x.inFlight}/${i ? fmt((x.cpuS - s.timeline[i - 1]!.cpuS) / (x.t - s.timeline[i - 1]!.t), 1) : '-'}`)
      .join(' ')}`,
    `  scheduler (/metrics each second): waiting mean ${fmt(s.waiting.mean)} max ${fmt(s.waiting.max, 0)} (a player waits for: mean ${fmt(s.waitingNow.mean)} max ${fmt(s.waitingNow.max, 0)}); in flight mean ${fmt(s.inFlight.mean)} max ${fmt(s.inFlight.max, 0)}, while some wait ${fmt(s.inFlightWhileWaiting.mean)}`,
  ];
}
