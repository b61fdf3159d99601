// Unit tests for the off-frame check: text wholly outside the frame for the whole video is named by its field.
import { describe, expect, it } from 'vitest';
import { offFrameIssues } from '../../../src/core/plan/frame-reach.js';
import { parseSettings } from '../../../src/core/setting-schema.js';
import type { ImageSetting, Setting } from '../../../src/core/setting-types.js';
import { parsedSettings } from '../../helpers/parsed-settings.js';

const FRAME = { width: 320, height: 180, duration: 10 };

const settings = parsedSettings;

describe('offFrameIssues', () => {
  it('accepts text inside, at the edges, and partly outside', () => {
    for (const at of [{}, { x: 0, y: 0 }, { x: 1, y: 1 }, { x: 1.05 }, { x: -0.05, align: 'LEFT' }, { y: 1.02, verticalAlign: 'BOTTOM' }]) {
      expect(offFrameIssues(settings(at), FRAME), JSON.stringify(at)).toEqual([]);
    }
  });

  it('refuses x = 2 naming settings[i].x, and y = -3 naming .y, each setting on its own', () => {
    const issues = offFrameIssues(settings({}, { x: 2 }, { y: -3 }), FRAME);
    expect(issues).toHaveLength(2);
    expect(issues[0]).toMatch(/^settings\[1\]\.x: the text at x 2, y 0.5 lies wholly outside the frame/);
    expect(issues[1]).toMatch(/^settings\[2\]\.y: /);
  });

  it('a long line reaching back into the frame is kept; the same line anchored the other way is refused', () => {
    const long = 'x'.repeat(60);
    // RIGHT-aligned at x = 1.5: the text runs leftwards from 1.5 and may cross the right edge.
    expect(offFrameIssues(settings({ content: long, x: 1.5, align: 'RIGHT' }), FRAME)).toEqual([]);
    expect(offFrameIssues(settings({ content: long, x: 1.5, align: 'LEFT' }), FRAME)).toHaveLength(1);
  });

  it('the aspect ratio counts: a CENTER line at x = 1.3 reaches into a portrait frame only if wide enough', () => {
    const s = settings({ content: 'abcdefgh', x: 1.3, fontSize: 0.1 });
    // 8 chars * 3 em * 18 px = 432 px wide at most, 216 px each side of the anchor; 1.3 * 320 = 416 > 320 + 216? no: kept.
    expect(offFrameIssues(s, FRAME)).toEqual([]);
    expect(offFrameIssues(settings({ content: 'a', x: 1.3, fontSize: 0.1 }), FRAME)).toHaveLength(1);
  });

  it('a MOVE that crosses the frame is kept, one that stays outside is refused naming animation or the axis', () => {
    const across = { x: -1, y: 0.5, animation: { toX: 2, startTime: 0, endTime: 5 } };
    expect(offFrameIssues(settings(across), FRAME)).toEqual([]);
    const above = { x: -1, y: -1, animation: { toX: 2, startTime: 0, endTime: 5 } };
    expect(offFrameIssues(settings(above), FRAME)[0]).toMatch(/^settings\[0\]\.y: the text moves from \(x -1, y -1\) to \(x 2, y -1\) entirely outside/);
    // A diagonal that passes beside the frame's corner: neither axis alone is outside, the path is.
    const corner = { x: -2, y: 0.5, animation: { toX: 0.5, toY: -2, startTime: 0, endTime: 5 } };
    expect(offFrameIssues(settings(corner), FRAME)[0]).toMatch(/^settings\[0\]\.animation: /);
  });

  it('only the part of the move inside the video counts', () => {
    // Enters the frame only after 8 s of a 10 s move: in a 5 s video it never arrives; in a 10 s one it does.
    const late = { x: -3, animation: { toX: 0.5, startTime: 0, endTime: 10 } };
    expect(offFrameIssues(settings(late), { ...FRAME, duration: 5 })).toHaveLength(1);
    expect(offFrameIssues(settings(late), FRAME)).toEqual([]);
    // Starts inside but the animation begins after the video ends: the start position is all there is.
    expect(offFrameIssues(settings({ x: 3, animation: { toX: 0.5, startTime: 20, endTime: 30 } }), FRAME)[0]).toMatch(/for the whole video/);
    // Unknown duration: the whole move is assumed to play.
    expect(offFrameIssues(settings(late), { ...FRAME, duration: null })).toEqual([]);
  });

  it('FORENSIC settings and a frame of unknown size are not checked', () => {
    const forensic = parseSettings([{ type: 'FORENSIC', content: '42' }], { apiVersion: '1.0' });
    if (!forensic.ok) throw new Error(forensic.issues.join());
    expect(offFrameIssues(forensic.value, FRAME)).toEqual([]);
    expect(offFrameIssues(settings({ x: 5 }), { width: 0, height: 0 })).toEqual([]);
  });
});

describe('offFrameIssues: IMAGE', () => {
  /** A fetched 200x100 logo, drawn 0.25 of the 320-px width: 80x40 pixels. */
  const logo = (fields: Record<string, unknown>): Setting => {
    const r = parseSettings([{ type: 'IMAGE', content: 'https://a.example/l.png', width: 0.25, ...fields }], { apiVersion: '2.0' });
    if (!r.ok) throw new Error(r.issues.join('\n'));
    return { ...(r.value[0] as ImageSetting), image: { sha256: 'ab'.repeat(32), format: 'png', width: 200, height: 100 } };
  };

  it('keeps a logo with one pixel column inside the frame, refuses it once it is wholly outside', () => {
    // LEFT-aligned: the logo spans [x*320, x*320 + 80).
    expect(offFrameIssues([logo({ x: 319 / 320, align: 'LEFT' })], FRAME)).toEqual([]);
    expect(offFrameIssues([logo({ x: 1, align: 'LEFT' })], FRAME)).toEqual([
      'settings[0].x: the image at x 1, y 0.5 lies wholly outside the frame, so nothing would be drawn; x and y are fractions of the frame (0..1 is inside: 0 the left/top edge, 1 the right/bottom), anchoring the image by align/verticalAlign',
    ]);
    // LEFT-aligned at x = -0.24: it starts 76.8 px left of the frame and ends 3.2 px into it; at -0.26 it ends outside.
    expect(offFrameIssues([logo({ x: -0.24, align: 'LEFT' })], FRAME)).toEqual([]);
    expect(offFrameIssues([logo({ x: -0.26, align: 'LEFT' })], FRAME)).toHaveLength(1);
    // RIGHT-aligned, its right edge is the anchor: just inside the left edge it shows, just outside it does not.
    expect(offFrameIssues([logo({ x: 0.01, align: 'RIGHT' })], FRAME)).toEqual([]);
    expect(offFrameIssues([logo({ x: -0.01, align: 'RIGHT' })], FRAME)).toHaveLength(1);
    // 40 px tall, anchored 36 px above the frame: hanging down from there (TOP) its last 4 rows show; sitting on it
    // (BOTTOM) it is wholly above the frame.
    expect(offFrameIssues([logo({ y: -0.2, verticalAlign: 'TOP' })], FRAME)).toEqual([]);
    expect(offFrameIssues([logo({ y: -0.2, verticalAlign: 'BOTTOM' })], FRAME)[0]).toMatch(/^settings\[0\]\.y: the image/);
  });

  it('keeps a logo that moves across the frame, refuses one that moves only outside it', () => {
    expect(offFrameIssues([logo({ x: -1, animation: { toX: 2, startTime: 0, endTime: 8 } })], FRAME)).toEqual([]);
    expect(offFrameIssues([logo({ x: -1, y: 3, animation: { toX: 2, startTime: 0, endTime: 8 } })], FRAME)[0]).toMatch(/^settings\[0\]\.y/);
  });

  it('does not judge an IMAGE whose image is not fetched yet', () => {
    const r = parseSettings([{ type: 'IMAGE', content: 'https://a.example/l.png', x: 5 }], { apiVersion: '2.0' });
    expect(r.ok && offFrameIssues(r.value, FRAME)).toEqual([]);
  });
});
