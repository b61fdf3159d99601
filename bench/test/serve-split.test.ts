// The capacity bench's CPU split: the child wrappers' log (parsed, classified, summed; a real wrapper around a real
// process, stopped or not), how many renders ran at once, and a CPU profile's samples given to their parts.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProcess } from '../../harness/start-process.js';
import { type ChildRun, childCpuWrappers, classifyRun, concurrency, parseChildLog, totalsByKind } from '../lib/child-cpu.js';
import { type CpuProfile, profileSplit } from '../lib/cpu-profile.js';

const run = (bin: ChildRun['bin'], args: string, startS = 0, endS = 1, cpuS = 0.5, code = 0): ChildRun => ({ bin, args, startS, endS, cpuS, code });

describe('the child log', () => {
  it('parses each line, its CPU from bash times, and leaves a half-written last line out', () => {
    const text = [
      'x264\t100.5\t101.25\t0m0.210s\t0m0.015s\t0\t--preset veryfast --band-self --qpfile a.qp -o b.264 c.y4m',
      'ffmpeg\t100.0\t100.4\t1m2.500s\t0m0.100s\t255\t-y -i rows1_seg_00004.nut -filter_script:v f.txt -f yuv4mpegpipe o.y4m',
      'ffmpeg\t100.0',
    ].join('\n');
    const runs = parseChildLog(text);
    expect(runs).toHaveLength(2);
    expect(runs[0]).toMatchObject({ bin: 'x264', startS: 100.5, endS: 101.25, code: 0 });
    expect(runs[0]!.cpuS).toBeCloseTo(0.225);
    expect(runs[1]!.cpuS).toBeCloseTo(62.6);
    expect(() => parseChildLog('sh\t1\t2\t0m0s\t0m0s\t0\tx')).toThrow(/unknown binary sh/);
  });

  it('tells the draw, the band encode, a full render, a shared one and an mp4 join apart, and sums them by kind', () => {
    const runs = [
      run('ffmpeg', '-y -copyts -threads 1 -i rows1_seg_00004.nut -threads 1 -filter_script:v x.band-filter.txt -map 0:v:0 -f yuv4mpegpipe x.y4m'),
      run('x264', '--preset veryfast --band-self --scenecut 0 --qpfile seg_00004.qp -o x.264 x.y4m', 0, 1, 0.25, 143),
      run('x264', '--fullhelp'),
      run('ffmpeg', '-i seg_00004.ts -filter_script:v filter.txt -c:v libx264 -f mpegts out.part'),
      run('ffmpeg', '-i seg_00004.ts -filter_complex_script x.shared-filter.txt -c:v libx264 a.part b.part'),
      run('ffmpeg', '-f concat -i list.txt -c copy -movflags +faststart out.mp4'),
    ];
    expect(runs.map(classifyRun)).toEqual(['draw', 'band-encode', 'other-x264', 'full-render', 'shared-full-render', 'mp4-join']);
    expect(totalsByKind(runs).get('band-encode')).toEqual({ runs: 1, stopped: 1, cpuS: 0.25, stoppedCpuS: 0.25, wallS: 1 });
  });

  it('counts the runs at once over a window, time-weighted', () => {
    const runs = [
      { startS: 0, endS: 4 },
      { startS: 2, endS: 6 },
      { startS: 9, endS: 20 },
    ];
    // 0-2: 1, 2-4: 2, 4-6: 1, 6-9: 0, 9-10: 1, over 0-10.
    const c = concurrency(runs, 0, 10, 2);
    expect(c.mean).toBeCloseTo((2 + 4 + 2 + 0 + 1) / 10);
    expect(c.idleShare).toBeCloseTo(0.3);
    expect(c.fullShare).toBeCloseTo(0.2);
  });
});

describe('the wrapper', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'child-cpu-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("logs a run's CPU and exit code, and passes a SIGTERM on so that a stopped child ends", async () => {
    // A stand-in "ffmpeg" that burns CPU until it is stopped: the wrapper runs whatever binary it is given.
    const { env, log } = await childCpuWrappers(dir, { ffmpeg: '/bin/sh', x264: '/bin/true' });
    await promisify(execFile)(env.WMARK_FFMPEG!, ['-c', 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exit 3']).catch((e: { code: number }) =>
      expect(e.code).toBe(3),
    );
    const child = startProcess({ name: 'the wrapped stand-in', command: env.WMARK_FFMPEG!, args: ['-c', 'while :; do :; done'] });
    await new Promise((r) => setTimeout(r, 300));
    await child.stop();
    const runs = parseChildLog(await readFile(log, 'utf8'));
    expect(runs.map((r) => r.code)).toEqual([3, 143]);
    expect(runs[0]!.args).toContain('exit 3');
    expect(runs[1]!.cpuS).toBeGreaterThan(0.05);
    expect(runs[1]!.endS - runs[1]!.startS).toBeLessThan(5);
  });
});

describe('profileSplit', () => {
  it('gives each sample to the first part that any frame of its stack matches', () => {
    const frame = (id: number, functionName: string, url: string, children: number[] = []) => ({ id, callFrame: { functionName, url }, children });
    const profile: CpuProfile = {
      nodes: [
        frame(1, '(root)', '', [2, 5, 7]),
        frame(2, 'serveSegment', 'file:///x/dist/bundle/chunk.js', [3]),
        frame(3, 'spliceViewer', 'file:///x/dist/bundle/chunk.js', [4]),
        frame(4, 'set', 'node:buffer'),
        frame(5, 'spawn', 'node:child_process'),
        frame(7, '(garbage collector)', ''),
      ],
      samples: [4, 3, 5, 7, 2],
      timeDeltas: [1000, 2000, 500, 250, 100],
    };
    const split = profileSplit(profile);
    expect(split.get('splice: a viewer')).toBe(3);
    expect(split.get('child processes: spawn, pipes, exit')).toBe(0.5);
    expect(split.get('garbage collection')).toBe(0.25);
    expect(split.get('other wmark code')).toBe(0.1);
  });
});
