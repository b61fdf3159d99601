// Video PES payloads of a TS segment (made at test time by the bundled ffmpeg, with audio) replaced: the other
// packets keep their order, the payloads read back as written, and continuity counters run on without a gap.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { FFMPEG } from '../../../../harness/tools.js';
import { prepareVideoPes, rewriteVideoPes, videoPesPayloads, writeVideoPes } from '../../../../src/core/mpegts/pes-rewrite.js';

function segment(): Uint8Array {
  const args = ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc2=s=192x128:r=25:d=1', '-f', 'lavfi', '-i', 'sine=d=1'];
  const out = ['-c:v', 'libx264', '-preset', 'veryfast', '-x264-params', 'aud=1:bframes=0', '-c:a', 'aac', '-muxdelay', '0', '-f', 'mpegts', '-'];
  const r = spawnSync(FFMPEG, [...args, ...out], { maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(r.stderr.toString());
  return new Uint8Array(r.stdout);
}

const ts = segment();
const packets = (bytes: Uint8Array) => Array.from({ length: bytes.length / 188 }, (_, i) => bytes.subarray(i * 188, (i + 1) * 188));
const pid = (packet: Uint8Array) => ((packet[1]! & 0x1f) << 8) | packet[2]!;
const hex = (list: Uint8Array[]) => list.map((p) => Buffer.from(p).toString('hex'));

describe('rewriteVideoPes', () => {
  // ffmpeg's first video stream: PID 0x100, PES stream id 0xe0.
  const videoPid = 0x100;

  it('keeps every payload and every other packet when nothing changes', () => {
    const out = rewriteVideoPes(ts, (payload) => payload);
    expect(out.length).toBe(ts.length);
    expect(hex(videoPesPayloads(out))).toEqual(hex(videoPesPayloads(ts)));
    const others = (bytes: Uint8Array) => packets(bytes).filter((p) => pid(p) !== videoPid);
    expect(others(ts).length).toBeGreaterThan(10);
    expect(hex(others(out))).toEqual(hex(others(ts)));
  });

  it('carries larger and smaller payloads, one PES each, with continuity counters in sequence', () => {
    const original = videoPesPayloads(ts);
    expect(original.length).toBe(25);
    const change = (payload: Uint8Array, index: number) =>
      index % 2 ? payload.subarray(0, payload.length - 7) : new Uint8Array([...payload, ...new Uint8Array(1000).fill(0x55)]);
    const out = rewriteVideoPes(ts, change);
    expect(hex(videoPesPayloads(out))).toEqual(hex(original.map(change)));
    const counters = packets(out)
      .filter((p) => pid(p) === videoPid)
      .map((p) => p[3]! & 0x0f);
    counters.forEach((c, i) => {
      if (i > 0) expect(c).toBe((counters[i - 1]! + 1) % 16);
    });
  });
});

describe('prepareVideoPes and writeVideoPes', () => {
  it('writes a prepared segment again and again with other payloads, as rewriteVideoPes does', () => {
    const prepared = prepareVideoPes(ts);
    const grow = (payload: Uint8Array, index: number) => new Uint8Array([...payload, ...new Uint8Array(index * 50).fill(0x44)]);
    const shrink = (payload: Uint8Array) => payload.subarray(0, payload.length >> 1);
    for (const change of [grow, shrink, grow]) {
      const out = writeVideoPes(
        prepared,
        prepared.pes.map((pes, index) => change(pes.payload, index)),
      );
      expect(hex([out])).toEqual(hex([rewriteVideoPes(ts, change)]));
      expect(hex(videoPesPayloads(out))).toEqual(hex(videoPesPayloads(ts).map(change)));
    }
  });
});
