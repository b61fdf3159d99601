// Numbers and anchor positions written into ffmpeg filter expressions, in the one spelling every filter graph here uses.
import type { MoveAnimation } from '../setting-types.js';

/** A number as a filter expression reads it, rounded to six decimals. */
export const num = (n: number): string => {
  // Expressions must never see exponent notation or -0.
  const fixed = Number(n.toFixed(6));
  return Object.is(fixed, -0) ? '0' : fixed.toString();
};

/** How far along its width (height) a drawn box sits on its anchor, by align (verticalAlign). */
export const H_FACTOR = { LEFT: 0, CENTER: 0.5, RIGHT: 1 } as const;
export const V_FACTOR = { TOP: 0, MIDDLE: 0.5, BOTTOM: 1 } as const;

/**
 * An anchor coordinate (a fraction of the frame) as an expression of `t`, the frame's time as drawtext and overlay
 * read it: constant, or a clamped linear move over [startTime, endTime] of the video timeline, which starts at
 * `timeOrigin` (segments keep their timestamps, so a move crosses segment boundaries without a jump).
 */
export function anchorExpr(from: number, to: number | undefined, anim: MoveAnimation | undefined, timeOrigin: number): string {
  if (!anim || to === undefined || to === from) return num(from);
  const span = anim.endTime - anim.startTime;
  const progress = `clip((t-${num(timeOrigin + anim.startTime)})/${num(span)},0,1)`;
  return `(${num(from)}+${num(to - from)}*${progress})`;
}
