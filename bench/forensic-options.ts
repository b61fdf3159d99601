// The forensic bench's settings: the clip and keys it works with, the targets of its parts F1-F8 (each named at the top of bench/forensic.ts), and its options (listed at the
// top of bench/forensic.ts) read from the command line. Pure.
import { FORENSIC_LAYOUTS } from '../src/core/forensic-layout.js';
import type { FullAttacks } from './forensic-attacks.js';
import { even } from './lib/forensic-media.js';
import { type Part, parseOnly, wants } from './lib/forensic-parts.js';

/** wmark's defaults (src/config/load-config.ts): the variants are encoded with these. */
export const ENGINE_ENCODE = { preset: 'veryfast', crf: 23 } as const;
export const PLAIN_KEY = 'bench-forensic-plain';
export const FORENSIC_KEY = 'bench-forensic';
export const SECONDS = 300;
export const FPS = 30;

/** The targets of parts F2-F8. */
export const TARGETS = {
  /** F2: the shortest leak identified, minutes. */
  f2Minutes: 3.5,
  f3PsnrDb: 47,
  f3Overhead: 0.01,
  f4Us: 50,
  f4Bytes: 3 * 1024,
  f5Seconds: 60,
  f6Trials: 1000,
  f8Ratio: 2,
  f8SidecarBytes: 5 * 1024 * 1024,
} as const;

export interface ForensicOptions {
  payloadCount: number;
  height: number;
  width: number;
  threads: number;
  seed: number;
  /** Score-level null trials: every leak's readings against this many other titles' codebooks, plus noise readings. */
  nullCodebooks: number;
  nullNoise: number;
  /** The hard leaks' F6' null trials. */
  nullTrials: number;
  f3Samples: number;
  quietWaitMs: number;
  /**
   * Full-resolution attacks cost a 720p re-encode each: 'rotate' runs each on one payload (in turn), 'all' on every
   * payload; 'auto' (default): 'rotate' first, then the remaining cells while the time budget allows.
   */
  fullAttacks: FullAttacks;
  budgetMin: number;
  /** F7's averaged copy is re-encoded at this scale (1 = full resolution). */
  collusionScale: number;
  rawNull: boolean;
  reuse: boolean;
  layoutChoice: string;
  only: Set<Part> | null;
}

/** The options from `npm run bench -- forensic --name value ...`; `randomSeed` gives the seed when none is named. */
export function forensicOptions(opt: Record<string, string | true>, randomSeed: () => number): ForensicOptions {
  const num = (name: string, def: number) => (opt[name] !== undefined && opt[name] !== true ? Number(opt[name]) : def);
  const height = num('height', 720);
  const layoutChoice = opt.layout === undefined ? 'whole' : String(opt.layout);
  if (!(FORENSIC_LAYOUTS as readonly string[]).includes(layoutChoice)) throw new Error(`--layout: one of ${FORENSIC_LAYOUTS.join(', ')}`);
  const only = parseOnly(opt.only);
  const payloadCount = num('payloads', 5);
  if (!Number.isInteger(payloadCount) || payloadCount < 2) throw new Error('--payloads: at least 2 (F7 averages two viewers)');
  const fullAttacks = opt['full-attacks'];
  return {
    payloadCount,
    height,
    width: even((height * 16) / 9),
    threads: num('threads', 2),
    seed: num('seed', randomSeed()),
    nullCodebooks: num('null-codebooks', 20),
    nullNoise: num('null-noise', 1000),
    nullTrials: num('null-trials', 10000),
    f3Samples: num('f3-segments', 12),
    quietWaitMs: num('quiet-wait', 60) * 1000,
    fullAttacks: fullAttacks === 'all' || fullAttacks === 'rotate' ? fullAttacks : 'auto',
    budgetMin: num('budget-min', 45),
    collusionScale: num('collusion-scale', 1),
    rawNull: opt['no-raw-null'] === undefined,
    reuse: opt.reuse !== undefined,
    layoutChoice,
    only,
  };
}

/** Whether this run measures `part` (every part but the diagnostics, unless --only names them). */
export const wanted = (o: ForensicOptions) => (part: Part) => wants(o.only, part);
