// A real-time viewer's playback, as the band suite's capacity part simulates it (pure: times in seconds on the
// viewer's own clock, from when it asked for its watermark). The viewer fetches one segment ahead of playback: segment
// 0 at once, segment i when playback reaches segment i-1. Playback starts `startupS` after segment 0 has arrived. A
// segment that arrives after the moment it must play is a stall: playback waits for it (as a player rebuffers), so
// the later segments' moments move by as much.

export interface ViewerSummary {
  /** When segment 0 had arrived. */
  firstSegmentS: number;
  /** Segments that arrived after they had to play. */
  stalls: number;
  /** Seconds playback waited, over all stalls. */
  stalledS: number;
  /** The latest a segment arrived after its moment (0 without a stall). */
  worstLatenessS: number;
}

export class PlaybackClock {
  private readonly arrivals: number[] = [];
  /** When each arrived segment started (or will start) to play. */
  private readonly plays: number[] = [];
  private stalls = 0;
  private stalledS = 0;
  private worstLatenessS = 0;

  constructor(
    private readonly durations: readonly number[],
    private readonly startupS: number,
  ) {
    if (durations.length === 0) throw new Error('a playlist without segments has nothing to play');
    if (!(startupS >= 0)) throw new Error(`the startup allowance must be 0 s or more, got ${startupS}`);
  }

  get segments(): number {
    return this.durations.length;
  }

  /** When the viewer asks for segment `i`: 0 for the first, else the moment segment i-1 starts to play. */
  requestAt(i: number): number {
    if (i === 0) return 0;
    const previous = this.plays[i - 1];
    if (previous === undefined) throw new Error(`segment ${i} is asked for before segment ${i - 1} has arrived`);
    return previous;
  }

  /** When segment `i` must be there to play without a stall (known once segment i-1 has arrived). */
  dueAt(i: number): number {
    if (i === 0) return Number.POSITIVE_INFINITY;
    const previous = this.plays[i - 1];
    if (previous === undefined) throw new Error(`segment ${i - 1} has not arrived yet`);
    return previous + this.durations[i - 1]!;
  }

  /** Segment `i` arrived at `t`; segments arrive in order. */
  arrived(i: number, t: number): void {
    if (i !== this.arrivals.length) throw new Error(`segment ${i} arrived, expected segment ${this.arrivals.length}`);
    if (i >= this.durations.length) throw new Error(`segment ${i} is past the playlist's ${this.durations.length}`);
    this.arrivals.push(t);
    if (i === 0) {
      this.plays.push(t + this.startupS);
      return;
    }
    const due = this.dueAt(i);
    const late = t - due;
    if (late > 0) {
      this.stalls++;
      this.stalledS += late;
      this.worstLatenessS = Math.max(this.worstLatenessS, late);
    }
    this.plays.push(Math.max(due, t));
  }

  summary(): ViewerSummary {
    if (this.arrivals.length === 0) throw new Error('no segment has arrived');
    return { firstSegmentS: this.arrivals[0]!, stalls: this.stalls, stalledS: this.stalledS, worstLatenessS: this.worstLatenessS };
  }
}

/** One trial of the capacity ladder: `viewers` at once, and how many of them stalled. */
export interface LadderStep {
  viewers: number;
  stalledViewers: number;
}

/**
 * The most viewers carried without a stall: the largest count of the steps (taken in increasing order) below the first
 * step with a stall; 0 when the first step stalled. `complete` is false when no step stalled (the ladder ended first,
 * so the capacity is at least that).
 */
export function capacityOf(steps: readonly LadderStep[]): { viewers: number; complete: boolean } {
  let viewers = 0;
  for (const step of steps) {
    if (step.stalledViewers > 0) return { viewers, complete: true };
    viewers = Math.max(viewers, step.viewers);
  }
  return { viewers, complete: false };
}

/** The ladder of viewer counts: increasing whole numbers of 1 or more, e.g. "2,4,6,8". */
export function parseLadder(text: string): number[] {
  const counts = text.split(',').map((s) => Number(s.trim()));
  if (counts.length === 0 || !counts.every((n, i) => Number.isInteger(n) && n >= 1 && (i === 0 || n > counts[i - 1]!)))
    throw new Error(`--capacity-ladder: increasing whole numbers of viewers, e.g. 2,4,6,8, got ${text}`);
  return counts;
}
