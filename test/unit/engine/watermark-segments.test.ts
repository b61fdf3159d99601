// How each segment of a watermark is put in place: rendered from the working segment, copied from a forensic variant, shared between forensic viewers with the same text, or cancelled when the watermark goes mid-render.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { codeword, forensicKey } from '../../../src/core/forensic/keyed-bits.js';
import { makeLayout, variantFileFor } from '../../../src/core/forensic/title-layout.js';
import type { Setting } from '../../../src/core/setting-types.js';
import { canonicalSettings } from '../../../src/core/watermark-identity.js';
import { mediaFile, mediaKeys } from '../../../src/engine/data-folder/layout.js';
import type { VideoRecord, WatermarkRecord } from '../../../src/engine/state/state-store.js';
import { fontMetrics, visibleSettings, watermarkFilterGraph } from '../../../src/engine/watermark/drawing.js';
import { deleteWatermark } from '../../../src/engine/watermark/manage.js';
import { requestWatermark } from '../../../src/engine/watermark/request.js';
import { readTitleLayout, watermarkSegments } from '../../../src/engine/watermark/watermark-segments.js';
import {
  addVideo,
  FAKE_FONT,
  forensic,
  renderedContent,
  settingsOf,
  slotsOf,
  text,
  UNIT_SEGMENTS,
  type UnitEngine,
  unitEnginePerTest,
  variantContent,
} from '../../helpers/unit-engine.js';

let unit: UnitEngine;
unitEnginePerTest((u) => (unit = u));

async function watermarkOn(video: VideoRecord, raw: unknown[]): Promise<WatermarkRecord> {
  return (await requestWatermark(unit.engine, { video: { videoId: video.id }, settings: settingsOf(raw), containers: ['m3u8'] })).watermark;
}

const readText = async (key: string) => (await unit.engine.media.read(key)).toString('utf8');

/** The graph the fake renderer lays a watermark's drawing out as. */
async function graphOf(w: WatermarkRecord, video: VideoRecord): Promise<string> {
  return watermarkFilterGraph(w, video, FAKE_FONT, await fontMetrics(unit.engine, unit.engine.tools.font.path)).graph;
}

/** The variant file a forensic viewer's payload picks for segment `index`, worked out from the engine secret. */
function expectedVariant(video: VideoRecord, payload: number, index: number): string {
  const layout = makeLayout(2, slotsOf(video.segments));
  const code = codeword(forensicKey(unit.engine.secret), video.id, payload, layout.slots);
  return variantFileFor(layout, code, index);
}

describe('watermarkSegments: a clean watermark', () => {
  it('renders segment i from working segment i into the watermark folder, shareable and grouped by the watermark', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video, [text('Alice')]);
    const plan = await watermarkSegments(unit.engine, w);
    expect(plan.folder).toBe(mediaKeys.watermark(video.id, w.id));
    expect(plan.linksOnly).toBe(false);
    expect(plan.video.id).toBe(video.id);
    expect(await plan.has(2)).toBe(false);

    await plan.put(2, 'now');
    const graph = await graphOf(w, video);
    expect(graph).toMatch(/^drawtext=fontfile=font\.ttf:textfile=text_0\.txt:/);
    expect(unit.renders).toEqual([
      {
        input: mediaKeys.workingSegment(video.id, 2),
        output: mediaKeys.segment(video.id, w.id, 2),
        drawingFolder: mediaKeys.watermark(video.id, w.id),
        gop: 120,
        hasAudio: false,
        shareable: true,
        group: w.id,
        urgency: 'now',
        graph,
      },
    ]);
    expect(await readText(mediaKeys.segment(video.id, w.id, 2))).toBe(renderedContent(`videos/${video.id}/seg_00002.ts`, graph));
    expect(await plan.has(2)).toBe(true);
    expect(await plan.has(3)).toBe(false);
  });

  it('renders nothing on a second put of a segment that is there, but again on make', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video, [text('Alice')]);
    const plan = await watermarkSegments(unit.engine, w);
    await plan.put(0, 'background');
    await plan.put(0, 'now');
    expect(unit.renders.map((r) => [r.output, r.urgency])).toEqual([[mediaKeys.segment(video.id, w.id, 0), 'background']]);
    await plan.make(0, 'ahead');
    expect(unit.renders.map((r) => r.urgency)).toEqual(['background', 'ahead']);
  });

  it('asks the renderer to make the video sources reachable once the plan is made', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video, [text('Alice')]);
    const useSources = vi.spyOn(unit.renderer, 'useSources');
    await watermarkSegments(unit.engine, w);
    expect(useSources).toHaveBeenCalledWith(video.id);
  });

  it('refuses with CANCELLED, rendering nothing, when the signal has already aborted', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video, [text('Alice')]);
    const plan = await watermarkSegments(unit.engine, w);
    await expect(plan.put(1, 'now', AbortSignal.abort())).rejects.toMatchObject({ code: 'CANCELLED' });
    expect(unit.renders).toEqual([]);
  });

  it('fails with VIDEO_NOT_FOUND once the video is gone', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video, [text('Alice')]);
    await unit.engine.store.deleteVideoAndWatermarks(video.id);
    await expect(watermarkSegments(unit.engine, w)).rejects.toMatchObject({ code: 'VIDEO_NOT_FOUND' });
  });
});

describe('watermarkSegments: forensic viewers', () => {
  it('reads the title layout from its layout file, or one slot a segment without one', async () => {
    const video = await addVideo(unit.engine, { enableForensic: true });
    expect(await readTitleLayout(unit.engine, video)).toEqual(makeLayout(2, slotsOf(UNIT_SEGMENTS)));
    await unit.engine.media.deletePrefix(mediaKeys.forensicFile(video.id, 'layout.json'));
    expect(await readTitleLayout(unit.engine, video)).toEqual(makeLayout(1, [1, 1, 1, 1, 1, 1]));
  });

  it('gives a viewer without text the variant its codeword picks, copied under its own key with no render', async () => {
    const video = await addVideo(unit.engine, { enableForensic: true });
    const payload = 0xbeef;
    const w = await watermarkOn(video, [forensic(payload)]);
    const plan = await watermarkSegments(unit.engine, w);
    expect(plan.linksOnly).toBe(true);
    for (let i = 0; i < video.segments.length; i++) await plan.put(i, 'now');
    expect(unit.renders).toEqual([]);
    for (let i = 0; i < video.segments.length; i++) {
      const variant = expectedVariant(video, payload, i);
      // Two-slot segments come in aa/ab/ba/bb, one-slot ones in a/b.
      expect(variant).toMatch(video.segments[i]! >= 3 ? /^[ab]{2}_0000\d\.ts$/ : /^[ab]_0000\d\.ts$/);
      const letters = variant.slice(0, variant.indexOf('_'));
      expect(await readText(mediaKeys.segment(video.id, w.id, i))).toBe(variantContent(video.id, letters, i));
    }
    // Nothing in the watermark folder names a variant.
    expect(await unit.engine.media.list(`${plan.folder}/`)).toEqual(video.segments.map((_, i) => mediaKeys.segment(video.id, w.id, i)));
  });

  it('renders text over a forensic variant once, in the shared folder, for every viewer with the same text and payload', async () => {
    const video = await addVideo(unit.engine, { enableForensic: true });
    const payload = 0x0102;
    // The same text and payload in another order is another watermark that draws the same thing on the same variants.
    const one = await watermarkOn(video, [text('Alice'), forensic(payload)]);
    const two = await watermarkOn(video, [forensic(payload), text('Alice')]);
    expect(two.id).not.toBe(one.id);
    const planOne = await watermarkSegments(unit.engine, one);
    const planTwo = await watermarkSegments(unit.engine, two);
    expect(planOne.linksOnly).toBe(false);

    await planOne.put(3, 'now');
    await planTwo.put(3, 'now');
    const variant = expectedVariant(video, payload, 3);
    const textHash = createHash('sha256')
      .update(canonicalSettings(visibleSettings(one) as Setting[]))
      .digest('hex')
      .slice(0, 32);
    const shared = `watermarks/${video.id}/_shared/${textHash}/${variant}`;
    expect(shared).toBe(mediaKeys.sharedText(video.id, textHash, variant));
    const graph = await graphOf(one, video);
    expect(unit.renders).toEqual([
      {
        input: mediaKeys.forensicFile(video.id, variant),
        output: shared,
        drawingFolder: `watermarks/${video.id}/_shared/${textHash}`,
        gop: 120,
        hasAudio: false,
        shareable: false,
        group: one.id,
        urgency: 'now',
        graph,
      },
    ]);
    const expected = renderedContent(mediaKeys.forensicFile(video.id, variant), graph);
    expect(await readText(shared)).toBe(expected);
    expect(await readText(mediaKeys.segment(video.id, one.id, 3))).toBe(expected);
    expect(await readText(mediaKeys.segment(video.id, two.id, 3))).toBe(expected);
  });

  it('renders separately for viewers with different text', async () => {
    const video = await addVideo(unit.engine, { enableForensic: true });
    const one = await watermarkSegments(unit.engine, await watermarkOn(video, [text('Alice'), forensic(4)]));
    const two = await watermarkSegments(unit.engine, await watermarkOn(video, [text('Bob'), forensic(4)]));
    await one.put(0, 'now');
    await two.put(0, 'now');
    expect(unit.renders).toHaveLength(2);
    const [a, b] = unit.renders.map((r) => r.output);
    expect(a).not.toBe(b);
    expect(a!.split('/').slice(0, 3)).toEqual(['watermarks', video.id, '_shared']);
    expect(b!.split('/').slice(0, 3)).toEqual(['watermarks', video.id, '_shared']);
    expect(unit.renders[0]!.input).toBe(unit.renders[1]!.input);
  });
});

describe('watermarkSegments: a watermark deleted mid-render', () => {
  it('ends its render with CANCELLED and leaves nothing in its folder', async () => {
    const video = await addVideo(unit.engine);
    const w = await watermarkOn(video, [text('Alice')]);
    const plan = await watermarkSegments(unit.engine, w);
    await plan.put(0, 'now');
    const release = unit.renderer.hold();
    const rendering = plan.put(1, 'now');
    const outcome = rendering.then(
      () => undefined,
      (error: unknown) => error,
    );
    await vi.waitFor(() => expect(unit.renders).toHaveLength(2));

    await deleteWatermark(unit.engine, w);
    expect(await unit.engine.store.getWatermark(w.id)).toBeUndefined();
    release();
    expect(await outcome).toMatchObject({ code: 'CANCELLED' });
    expect(await unit.engine.media.list(`${plan.folder}/`)).toEqual([]);
    expect(existsSync(mediaFile(unit.engine.paths, plan.folder))).toBe(false);
    // The working segments it was drawn from stay.
    expect(await unit.engine.media.exists(mediaKeys.workingSegment(video.id, 1))).toBe(true);
  });
});
