// Unit tests for reading ffprobe's answer (interpretProbe, parseRational), ffmpeg's -progress output, and the
// working segments' durations computed from frame counts. Probe JSON below is what the bundled ffprobe prints.
import { describe, expect, it } from 'vitest';
import { WmarkError } from '../../../src/core/errors.js';
import { framesPerSegment } from '../../../src/core/plan/segment-timing.js';
import { segmentDurations } from '../../../src/core/plan/working-form.js';
import { interpretProbe, parseRational, unreadableHint } from '../../../src/ffmpeg/probe-media.js';
import { parseProgress, progressWatch } from '../../../src/ffmpeg/run-ffmpeg.js';

type Probe = Parameters<typeof interpretProbe>[0];

const H264_320 = {
  codec_name: 'h264',
  codec_type: 'video',
  width: 320,
  height: 180,
  r_frame_rate: '30/1',
  avg_frame_rate: '30/1',
  duration: '10.000000',
  disposition: { attached_pic: 0 },
};
const AAC = { codec_name: 'aac', codec_type: 'audio', r_frame_rate: '0/0', avg_frame_rate: '0/0', duration: '10.000000', disposition: { attached_pic: 0 } };
const MP3 = { codec_name: 'mp3', codec_type: 'audio', r_frame_rate: '0/0', avg_frame_rate: '0/0', duration: '1.044898', disposition: { attached_pic: 0 } };
const COVER = {
  codec_name: 'mjpeg',
  codec_type: 'video',
  width: 64,
  height: 64,
  r_frame_rate: '90000/1',
  avg_frame_rate: '0/0',
  duration: '1.044900',
  disposition: { attached_pic: 1 },
};
const MP4 = { format_name: 'mov,mp4,m4a,3gp,3g2,mj2', duration: '10.000000', size: '138444' };

/** Runs fn, expecting a WmarkError, and returns it. */
function thrown(fn: () => unknown): WmarkError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(WmarkError);
    return error as WmarkError;
  }
  throw new Error('expected a WmarkError, nothing was thrown');
}

describe('interpretProbe', () => {
  it('reads a video with audio', () => {
    expect(interpretProbe({ streams: [H264_320, AAC], format: MP4 }, 'clip.mp4')).toEqual({
      formatName: 'mov,mp4,m4a,3gp,3g2,mj2',
      durationSeconds: 10,
      width: 320,
      height: 180,
      fps: { num: 30, den: 1 },
      videoCodec: 'h264',
      hasAudio: true,
      audioCodec: 'aac',
      sizeBytes: 138444,
    });
  });

  it('detects a video without audio', () => {
    const info = interpretProbe({ streams: [H264_320], format: MP4 }, 'mute.mp4');
    expect(info.hasAudio).toBe(false);
    expect(info.audioCodec).toBeUndefined();
  });

  it('finds the audio whichever order the streams come in, and uses the first real video stream', () => {
    const second = { ...H264_320, width: 640, height: 360 };
    const info = interpretProbe({ streams: [AAC, COVER, H264_320, second], format: MP4 }, 'x.mkv');
    expect(info.hasAudio).toBe(true);
    expect([info.width, info.height, info.videoCodec]).toEqual([320, 180, 'h264']);
  });

  it('keeps the exact rational frame rate of NTSC video', () => {
    const info = interpretProbe({ streams: [{ ...H264_320, r_frame_rate: '30000/1001', avg_frame_rate: '30000/1001' }], format: MP4 }, 'ntsc.mp4');
    expect(info.fps).toEqual({ num: 30000, den: 1001 });
  });

  it('falls back to r_frame_rate when avg_frame_rate is unknown', () => {
    const info = interpretProbe({ streams: [{ ...H264_320, avg_frame_rate: '0/0', r_frame_rate: '25/1' }], format: MP4 }, 'x.mp4');
    expect(info.fps).toEqual({ num: 25, den: 1 });
  });

  it('takes the stream duration when the container has none, and NaN when nobody knows', () => {
    expect(interpretProbe({ streams: [H264_320], format: { format_name: 'matroska,webm' } }, 'x.mkv').durationSeconds).toBe(10);
    const { duration: _omitted, ...noDuration } = H264_320;
    expect(interpretProbe({ streams: [noDuration], format: { format_name: 'h264' } }, 'x.h264').durationSeconds).toBeNaN();
  });

  it('rejects audio with cover art as NO_VIDEO_STREAM: a picture is not a video', () => {
    const e = thrown(() => interpretProbe({ streams: [MP3, COVER], format: { format_name: 'mp3', duration: '1.044898', size: '8855' } }, 'song.mp3'));
    expect(e.code).toBe('NO_VIDEO_STREAM');
    expect(e.kind).toBe('unprocessable');
    expect(e.exitCode).toBe(2);
    expect(e.message).toBe('song.mp3 has no video stream');
    // The hint names what the file does hold, without calling the cover a video.
    expect(e.hint).toBe('It contains: audio, cover art.');
  });

  it('names every stream an unusable file holds', () => {
    const e = thrown(() =>
      interpretProbe({ streams: [AAC, { codec_type: 'subtitle', codec_name: 'mov_text' }, { codec_type: 'data' }, {}], format: MP4 }, 'talk.m4a'),
    );
    expect(e.code).toBe('NO_VIDEO_STREAM');
    expect(e.message).toBe('talk.m4a has no video stream');
    expect(e.hint).toBe('It contains: audio, subtitle, data, unknown.');
  });

  it('rejects a file without streams without inventing a hint', () => {
    const e = thrown(() => interpretProbe({ streams: [], format: { format_name: 'tty' } }, 'notes.txt'));
    expect(e.code).toBe('NO_VIDEO_STREAM');
    expect(e.hint).toBeUndefined();
    expect(thrown(() => interpretProbe({}, 'x')).code).toBe('NO_VIDEO_STREAM');
  });

  it.each([
    ['0/0', '0/0'],
    ['0/0', undefined],
    [undefined, undefined],
    ['0/0', '90000/1'],
    ['1/2', '1/2'],
    ['300/1', '300/1'],
    ['30/0', '30/0'],
    ['abc', 'n/a'],
  ])('rejects an unusable frame rate (avg %s, r %s) as BAD_FRAME_RATE', (avg, r) => {
    const stream = { ...H264_320, avg_frame_rate: avg, r_frame_rate: r };
    const e = thrown(() => interpretProbe({ streams: [stream], format: MP4 }, 'odd.mp4'));
    expect(e.code).toBe('BAD_FRAME_RATE');
    expect(e.exitCode).toBe(2);
    expect(e.message).toContain('odd.mp4');
    expect(e.message).toContain(`(${avg ?? 'none'})`);
  });

  it.each([1, 240, 23.976])('accepts the frame rate %d fps at the edges of the range', (rate) => {
    const text = Number.isInteger(rate) ? `${rate}/1` : '24000/1001';
    expect(interpretProbe({ streams: [{ ...H264_320, avg_frame_rate: text }], format: MP4 }, 'x').fps).toEqual(parseRational(text));
  });

  it('rejects a video stream without a picture size', () => {
    const probe: Probe = { streams: [{ ...H264_320, width: 0, height: 0 }], format: MP4 };
    expect(thrown(() => interpretProbe(probe, 'x.mp4')).code).toBe('BAD_DIMENSIONS');
    const { width: _w, ...noWidth } = H264_320;
    expect(thrown(() => interpretProbe({ streams: [noWidth], format: MP4 }, 'x.mp4')).code).toBe('BAD_DIMENSIONS');
  });
});

describe('parseRational', () => {
  it.each([
    ['30/1', { num: 30, den: 1 }],
    ['30000/1001', { num: 30000, den: 1001 }],
    ['25', { num: 25, den: 1 }],
  ])('reads %s', (text, expected) => {
    expect(parseRational(text)).toEqual(expected);
  });

  it.each([undefined, '', '0/0', '0/1', '30/0', 'x/y', 'N/A'])('has no value for %j', (text) => {
    expect(parseRational(text)).toBeUndefined();
  });
});

describe('parseProgress', () => {
  const block = (frame: number, us: number, progress = 'continue') =>
    [
      `frame=${frame}`,
      'fps=0.00',
      'stream_0_0_q=28.0',
      'bitrate=N/A',
      'total_size=48',
      `out_time_us=${us}`,
      `out_time_ms=${us}`,
      `out_time=00:00:0${Math.floor(us / 1e6)}.000000`,
      'dup_frames=0',
      'drop_frames=0',
      'speed=1.2x',
      `progress=${progress}`,
    ].join('\n');

  it('reads the time, frame count and bytes written of a report', () => {
    expect(parseProgress(block(42, 1_400_000))).toEqual({ time: 1.4, frames: 42, bytes: 48 });
    expect(parseProgress('total_size=N/A\n')).toEqual({});
  });

  it('keeps the latest values when a chunk holds several reports', () => {
    expect(parseProgress(`${block(10, 333_333)}\n${block(300, 10_000_000, 'end')}\n`)).toEqual({ time: 10, frames: 300, bytes: 48 });
  });

  it('reads out_time_ms as microseconds (old ffmpeg names it so)', () => {
    expect(parseProgress('out_time_ms=2500000\n')).toEqual({ time: 2.5 });
  });

  it('ignores unknown and not-yet-known values', () => {
    expect(parseProgress('out_time_us=N/A\nout_time_ms=N/A\nout_time=N/A\nprogress=continue\n')).toEqual({});
    expect(parseProgress('out_time_us=-9223372036854775807\n')).toEqual({});
    expect(parseProgress('')).toEqual({});
    // dup_frames / drop_frames must not be mistaken for the frame count.
    expect(parseProgress('dup_frames=7\ndrop_frames=3\n')).toEqual({});
  });

  it('tolerates CRLF and surrounding spaces', () => {
    expect(parseProgress('frame=5\r\n  out_time_us=200000\r\n')).toEqual({ time: 0.2, frames: 5 });
  });
});

describe('segmentDurations', () => {
  it('gives every segment a full GOP except a shorter last one', () => {
    expect(segmentDurations(3, 300, { num: 30, den: 1 })).toEqual([4, 4, 2]);
    expect(segmentDurations(3, 240 + 1, { num: 30, den: 1 })).toEqual([4, 4, Number((1 / 30).toFixed(6))]);
    expect(segmentDurations(2, 240, { num: 30, den: 1 })).toEqual([4, 4]);
    expect(segmentDurations(1, 1, { num: 25, den: 1 })).toEqual([0.04]);
  });

  it('with lead segments: 0.5 s, 0.5 s, 1 s and 2 s, then full GOPs, the last shorter', () => {
    expect(segmentDurations(6, 315, { num: 30, den: 1 }, true)).toEqual([0.5, 0.5, 1, 2, 4, 2.5]);
    expect(segmentDurations(3, 45, { num: 30, den: 1 }, true)).toEqual([0.5, 0.5, 0.5]);
    expect(segmentDurations(4, 90, { num: 30000, den: 1001 }, true)).toEqual([0.5005, 0.5005, 1.001, 1.001]);
    const e = thrown(() => segmentDurations(3, 315, { num: 30, den: 1 }, true));
    expect(e.message).toBe('ffmpeg reported 315 frames for 3 segments of 15, 15, 30, 60, then 120 frames');
  });

  it('uses the exact NTSC frame duration', () => {
    // 210 frames of 1001/30000 s = 7.007 s: one GOP of 120 frames (4.004 s) and 90 frames (3.003 s).
    expect(segmentDurations(2, 210, { num: 30000, den: 1001 })).toEqual([4.004, 3.003]);
    expect(segmentDurations(3, 240, { num: 24000, den: 1001 })).toEqual([4.004, 4.004, 2.002]);
  });

  it.each([
    [{ num: 30, den: 1 }, 10],
    [{ num: 30000, den: 1001 }, 9.97],
    [{ num: 25, den: 1 }, 13.3],
    [{ num: 24, den: 1 }, 5],
    [{ num: 24000, den: 1001 }, 61.2],
  ])('at %o fps the segments of a %d s video add up to it within a frame', (fps, seconds) => {
    const frame = fps.den / fps.num;
    const frames = Math.round(seconds / frame);
    const count = Math.ceil(frames / framesPerSegment(fps));
    const durations = segmentDurations(count, frames, fps);
    expect(durations).toHaveLength(count);
    expect(Math.abs(durations.reduce((a, b) => a + b, 0) - frames * frame)).toBeLessThan(1e-5 * count);
    expect(Math.abs(durations.reduce((a, b) => a + b, 0) - seconds)).toBeLessThanOrEqual(frame);
    for (const d of durations.slice(0, -1)) expect(d).toBeCloseTo(framesPerSegment(fps) * frame, 6);
  });

  it.each([
    [3, undefined],
    [3, 0],
    [3, 240],
    [3, 361],
    [1, 121],
    [2, 1],
  ])('rejects %d segments for %s frames as FRAME_COUNT_MISMATCH', (count, frames) => {
    const e = thrown(() => segmentDurations(count, frames, { num: 30, den: 1 }));
    expect(e.code).toBe('FRAME_COUNT_MISMATCH');
    expect(e.message).toBe(`ffmpeg reported ${frames ?? 'no'} frames for ${count} segments of 120 frames`);
  });
});

describe("progressWatch (the stall watchdog's rule)", () => {
  it('counts the time since the frame count, output time or size last moved', () => {
    const w = progressWatch(1000);
    expect(w.stalledFor(1500)).toBe(500);
    w.seen({ frames: 2, time: 0.06, bytes: 100 }, 2000);
    expect(w.stalledFor(2000)).toBe(0);
    // The same report again and again (a deadlocked graph whose main loop still turns) is no progress.
    for (const t of [2500, 3000, 3500]) w.seen({ frames: 2, time: 0.06, bytes: 100 }, t);
    expect(w.stalledFor(4000)).toBe(2000);
    // Any one value moving is progress: the size while frames are buffered, the time while frames are dropped.
    w.seen({ frames: 2, time: 0.06, bytes: 180 }, 4100);
    expect(w.stalledFor(4100)).toBe(0);
    w.seen({ frames: 2, time: 0.1, bytes: 180 }, 4200);
    expect(w.stalledFor(4300)).toBe(100);
  });

  it('a report with nothing known yet is not progress', () => {
    const w = progressWatch(0);
    w.seen({}, 700);
    expect(w.stalledFor(900)).toBe(900);
  });
});

describe('the hint for a source ffprobe cannot read', () => {
  const ffmpeg = 'Invalid data found when processing input';
  it('says what the file holds instead, what wmark takes, and ffmpeg last', () => {
    expect(unreadableHint(Buffer.from('meeting notes\n'), ffmpeg)).toBe(
      `It holds text, not a video: give a video file (mp4, mov, mkv, webm, ...) or a URL that answers with one. (ffmpeg: ${ffmpeg})`,
    );
    expect(unreadableHint(Buffer.from('<!DOCTYPE html><html>'), ffmpeg)).toMatch(/^It holds a web page or XML, not a video: /);
    expect(unreadableHint(Buffer.from([0x00, 0xff, 0x13, 0x37]), ffmpeg)).toMatch(/^It is no video format ffmpeg knows: /);
    expect(unreadableHint(undefined, undefined)).toBe(
      'It is no video format ffmpeg knows: give a video file (mp4, mov, mkv, webm, ...) or a URL that answers with one.',
    );
  });
});
