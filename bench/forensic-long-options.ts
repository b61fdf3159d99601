// The forensic-long bench's options (listed at the top of bench/forensic-long.ts) and its targets. Pure.
import { even } from './lib/forensic-media.js';
import { numberOption } from './lib/suite.js';

/** Peak memory of every detect (the whole process tree) and the full leak's detect time on 2 cores. */
export const MEMORY_TARGET = 1024 ** 3;
export const WALL_TARGET_S = 300;
export const KEY = 'bench-forensic-long';

export interface LongOptions {
  hours: number;
  height: number;
  width: number;
  fps: number;
  sceneMinutes: number;
  leakScale: number;
  leakCrf: number;
  /** The title's length. */
  minutes: number;
  hdMinutes: number;
  payload: number;
  quietWaitMs: number;
  /** Leak lengths (minutes) detected for alignment's scaling, clipped to the title, shortest first. */
  scaling: number[];
  reingest: boolean;
}

/** The options from `npm run bench -- forensic-long --name value ...`. */
export function longOptions(opt: Record<string, string | true>): LongOptions {
  const num = (name: string, fallback: number) => numberOption(opt[name], fallback, name);
  const hours = num('hours', 2);
  const height = even(num('height', 180));
  const minutes = Math.round(hours * 60);
  const scaling = [
    ...new Set(
      String(opt.scaling ?? '10,30,120')
        .split(',')
        .map(Number)
        .filter((m) => m > 0)
        .map((m) => Math.min(m, minutes)),
    ),
  ].sort((a, b) => a - b);
  if (minutes < 5) throw new Error('--hours: a forensic title is at least 5 minutes');
  return {
    hours,
    height,
    width: even((height * 16) / 9),
    fps: num('fps', 30),
    sceneMinutes: num('scene-min', 5),
    leakScale: num('leak-scale', 0.5),
    leakCrf: num('leak-crf', 28),
    minutes,
    hdMinutes: Math.min(num('hd-minutes', 20), minutes),
    payload: num('payload', 20011),
    quietWaitMs: num('quiet-wait', 10) * 1000,
    scaling,
    reingest: opt.reingest !== undefined,
  };
}
