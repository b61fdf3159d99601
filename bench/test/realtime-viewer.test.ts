// The capacity part's pure parts: a real-time viewer's playback clock (when it asks for each segment, which arrivals
// stall it and by how much), the capacity read off a ladder of trials, and a counter read from /metrics.
import { describe, expect, it } from 'vitest';
import { metricTotal } from '../lib/band-figures.js';
import { capacityOf, PlaybackClock, parseLadder } from '../lib/realtime-viewer.js';

describe('a real-time viewer', () => {
  it('asks for each segment when playback reaches the one before, and counts no stall when every segment is in time', () => {
    const clock = new PlaybackClock([0.5, 0.5, 1, 2, 4], 0.5);
    expect(clock.requestAt(0)).toBe(0);
    clock.arrived(0, 0.8); // first segment after 0.8 s; playback starts at 1.3
    expect(clock.requestAt(1)).toBeCloseTo(1.3);
    expect(clock.dueAt(1)).toBeCloseTo(1.8);
    clock.arrived(1, 1.5);
    expect(clock.requestAt(2)).toBeCloseTo(1.8);
    clock.arrived(2, 2.0);
    expect(clock.requestAt(3)).toBeCloseTo(2.3);
    clock.arrived(3, 3.3); // due at 3.3: exactly in time
    clock.arrived(4, 4.0);
    expect(clock.summary()).toEqual({ firstSegmentS: 0.8, stalls: 0, stalledS: 0, worstLatenessS: 0 });
  });

  it('counts a late segment as a stall and moves the later moments by its lateness, as a player rebuffers', () => {
    const clock = new PlaybackClock([2, 2, 2, 2], 0);
    clock.arrived(0, 1); // plays 1-3
    clock.arrived(1, 3.5); // due at 3: 0.5 s late, plays 3.5-5.5
    expect(clock.requestAt(2)).toBeCloseTo(3.5);
    expect(clock.dueAt(2)).toBeCloseTo(5.5);
    clock.arrived(2, 5.4); // in time for the moved moment
    clock.arrived(3, 8.9); // due at 7.5: 1.4 s late
    const s = clock.summary();
    expect(s.stalls).toBe(2);
    expect(s.stalledS).toBeCloseTo(1.9);
    expect(s.worstLatenessS).toBeCloseTo(1.4);
    expect(s.firstSegmentS).toBe(1);
  });

  it('refuses arrivals out of order, a request before the previous segment arrived, and an empty playlist', () => {
    const clock = new PlaybackClock([1, 1], 0);
    expect(() => clock.requestAt(1)).toThrow(/before segment 0 has arrived/);
    expect(() => clock.arrived(1, 1)).toThrow(/expected segment 0/);
    clock.arrived(0, 0.2);
    clock.arrived(1, 0.5);
    expect(() => clock.arrived(2, 3)).toThrow(/past the playlist's 2/);
    expect(() => new PlaybackClock([], 0)).toThrow(/without segments/);
    expect(() => new PlaybackClock([1], -1)).toThrow(/0 s or more/);
    expect(() => new PlaybackClock([1], 0).summary()).toThrow(/no segment/);
  });
});

describe('the capacity ladder', () => {
  it('is the last count below the first trial with a stall', () => {
    const steps = [
      { viewers: 2, stalledViewers: 0 },
      { viewers: 4, stalledViewers: 0 },
      { viewers: 6, stalledViewers: 1 },
    ];
    expect(capacityOf(steps)).toEqual({ viewers: 4, complete: true });
    expect(capacityOf([{ viewers: 2, stalledViewers: 2 }])).toEqual({ viewers: 0, complete: true });
    expect(capacityOf(steps.slice(0, 2))).toEqual({ viewers: 4, complete: false });
  });

  it('reads an increasing list of counts and refuses anything else', () => {
    expect(parseLadder('2, 4,6')).toEqual([2, 4, 6]);
    expect(() => parseLadder('4,2')).toThrow(/increasing whole numbers/);
    expect(() => parseLadder('0,2')).toThrow(/increasing whole numbers/);
    expect(() => parseLadder('2,x')).toThrow(/got 2,x/);
  });
});

describe("serve's metrics", () => {
  it('sums a counter over its labels and reads 0 for a counter that is absent', () => {
    const text = [
      '# HELP wmark_band_fallbacks_total Band renders that failed',
      '# TYPE wmark_band_fallbacks_total counter',
      'wmark_band_fallbacks_total{reason="SPLICE_MISMATCH"} 2',
      'wmark_band_fallbacks_total{reason="BITSTREAM_INVALID"} 1',
      'wmark_band_renders_total 40',
      'wmark_band_renders_total_extra 7',
    ].join('\n');
    expect(metricTotal(text, 'wmark_band_fallbacks_total')).toBe(3);
    expect(metricTotal(text, 'wmark_band_renders_total')).toBe(40);
    expect(metricTotal(text, 'wmark_renders_in_flight')).toBe(0);
  });
});
