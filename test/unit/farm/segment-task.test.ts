// What travels through Redis: segment tasks are checked on arrival, queue URLs parsed once, and a failed job's
// reason keeps its error code for the caller that waits.
import { describe, expect, it } from 'vitest';
import { WmarkError } from '../../../src/core/errors.js';
import { parseQueueUrl, redactQueueUrl } from '../../../src/farm/queue-url.js';
import { errorFromReason, failureReason, segmentJobId } from '../../../src/farm/task-queue.js';
import { bandTask } from '../../../src/farm/tasks/band-task.js';
import { parseSegmentTask, type SegmentTask } from '../../../src/farm/tasks/segment-task.js';

const task: SegmentTask = {
  version: '0.1.0',
  input: 'videos/v1/seg_00000.ts',
  output: 'watermarks/w1/seg_00000.ts',
  filterScript: 'drawtext=fontfile=font.ttf:textfile=text_0.txt',
  textFiles: [{ name: 'text_0.txt', content: 'for alice' }],
  encode: { preset: 'veryfast', crf: 23 },
  gop: 120,
  hasAudio: true,
};

const problems = (data: unknown) => {
  try {
    parseSegmentTask(data);
    return [];
  } catch (error) {
    expect((error as WmarkError).code).toBe('TASK_INVALID');
    return (error as WmarkError).details;
  }
};

describe('segment tasks', () => {
  it('round-trip through JSON unchanged', () => {
    expect(parseSegmentTask(JSON.parse(JSON.stringify(task)))).toEqual(task);
  });

  it('refuse keys and text file names that could reach outside the store or the scratch folder', () => {
    expect(problems({ ...task, input: '../etc/passwd' })).toEqual(['segment task input: not a media key']);
    expect(problems({ ...task, output: '/abs.ts' })).toHaveLength(1);
    expect(problems({ ...task, textFiles: [{ name: '../x.txt', content: '' }] })).toHaveLength(1);
    expect(problems({ ...task, textFiles: [{ name: 'font.ttf', content: 'not a font' }] })).toHaveLength(1);
    expect(problems({ ...task, textFiles: [{ name: 'filter.txt', content: '' }] })).toHaveLength(1);
  });

  it('carry the images they overlay by media key, never their bytes, under names that stay in the scratch folder', () => {
    const withImages = { ...task, images: [{ name: 'image_1.png', key: `images/${'ab'.repeat(32)}-64x32.png` }] };
    expect(parseSegmentTask(JSON.parse(JSON.stringify(withImages)))).toEqual(withImages);
    expect(problems({ ...task, images: [{ name: 'image_1.png', key: '../secret.png' }] })).toEqual(['segment task images.0.key: not a media key']);
    expect(problems({ ...task, images: [{ name: '../image.png', key: 'images/a.png' }] })).toHaveLength(1);
    expect(problems({ ...task, images: [{ name: 'filter.txt', key: 'images/a.png' }] })).toHaveLength(1);
  });

  it('carry the band a mark fits: its rows, the keys of its band media and the shared encode settings; bad keys or rows are refused', () => {
    const band = {
      cut: { rows: { top: 9, bottom: 12 }, width: 320, height: 180 },
      shared: 'videos/v1/band/seg_00000.ts',
      rows: 'videos/v1/band/rows1_seg_00000.nut',
      qpfile: 'videos/v1/band/seg_00000.qp',
      options: { preset: 'veryfast', crf: 23, gop: 120, refs: 3 },
    };
    const banded = { ...task, band };
    expect(parseSegmentTask(JSON.parse(JSON.stringify(banded)))).toEqual(banded);
    expect(bandTask({ ...band, options: { ...band.options, threads: 2 } })).toEqual(band);
    expect(problems({ ...task, band: { ...band, rows: '../rows.nut' } })).toEqual(['segment task band.rows: not a media key']);
    expect(problems({ ...task, band: { ...band, cut: { ...band.cut, rows: { top: 9, bottom: 9 } } } })).toEqual([
      'segment task band.cut.rows: the band ends below its top',
    ]);
    expect(problems({ ...task, band: { ...band, options: { ...band.options, refs: 0 } } })).toHaveLength(1);
  });

  it('name every problem of a malformed task', () => {
    const found = problems({ ...task, version: '', gop: 0, encode: { preset: 'x y', crf: 99 } });
    expect(found.join('\n')).toMatch(/version/);
    expect(found.join('\n')).toMatch(/gop/);
    expect(found.join('\n')).toMatch(/encode\.preset/);
    expect(found.join('\n')).toMatch(/encode\.crf/);
    expect(problems('nonsense')).toHaveLength(1);
  });
});

describe('queue URLs', () => {
  it('read host, port, database and credentials', () => {
    expect(parseQueueUrl('redis://10.0.0.5:6380')).toEqual({ host: '10.0.0.5', port: 6380, db: 0, tls: false });
    expect(parseQueueUrl('redis://farm')).toMatchObject({ host: 'farm', port: 6379 });
    expect(parseQueueUrl('rediss://user:p%40ss@farm:7000/2')).toEqual({ host: 'farm', port: 7000, db: 2, username: 'user', password: 'p@ss', tls: true });
    expect(parseQueueUrl('redis://[::1]:6379')).toMatchObject({ host: '::1' });
  });

  it('refuse anything else with BAD_QUEUE_URL', () => {
    for (const url of ['localhost:6379', 'http://farm:6379', 'redis://farm/abc', 'redis://']) {
      expect(() => parseQueueUrl(url), url).toThrow(expect.objectContaining({ code: 'BAD_QUEUE_URL' }));
    }
  });

  it('never print a password', () => {
    expect(redactQueueUrl('redis://:secret@farm:6379')).toBe('redis://:***@farm:6379');
    expect(redactQueueUrl('redis://farm:6379')).toBe('redis://farm:6379');
  });
});

describe('job failures', () => {
  it('keep the catalogue code from worker to caller', () => {
    const reason = failureReason(new WmarkError('WORKER_VERSION_MISMATCH', 'worker w1 runs wmark 0.2.0'));
    expect(reason).toBe('WORKER_VERSION_MISMATCH: worker w1 runs wmark 0.2.0');
    const back = errorFromReason(reason, 'watermarks/w1/seg_00000.ts');
    expect(back).toMatchObject({ code: 'WORKER_VERSION_MISMATCH', message: 'worker w1 runs wmark 0.2.0', exitCode: 6 });
    expect(back.hint).toMatch(/same wmark version/);
  });

  it('wrap a reason without a known code, naming the segment', () => {
    expect(errorFromReason('NOT_A_CODE: x', 'watermarks/w1/seg_00003.ts')).toMatchObject({
      code: 'WATERMARK_FAILED',
      message: 'rendering watermarks/w1/seg_00003.ts failed: NOT_A_CODE: x',
    });
  });

  it('give one job id per output, without the characters BullMQ reserves', () => {
    expect(segmentJobId('watermarks/w1/seg_00000.ts')).toBe(segmentJobId('watermarks/w1/seg_00000.ts'));
    expect(segmentJobId('watermarks/w1/seg_00000.ts')).not.toBe(segmentJobId('watermarks/w1/seg_00001.ts'));
    expect(segmentJobId('a')).toMatch(/^seg-[0-9a-f]{40}$/);
  });
});
