// Whether this machine's ffmpeg and font can render watermarked segments: what a render-farm worker checks before it
// takes any work, so a broken install refuses with a reason instead of failing (or, worse, rendering) every task.
import { access, constants, readFile } from 'node:fs/promises';
import type { ProcessRunner } from './run-ffmpeg.js';

/** What a worker's tasks need of ffmpeg: drawtext, libx264 and MPEG-TS (segments); blend (forensic); aac and segment (ingest). */
const NEEDS = [
  { list: '-filters', name: 'drawtext', what: 'the drawtext filter' },
  { list: '-filters', name: 'blend', what: 'the blend filter' },
  { list: '-encoders', name: 'libx264', what: 'the libx264 encoder' },
  { list: '-encoders', name: 'aac', what: 'the aac encoder' },
  { list: '-muxers', name: 'mpegts', what: 'the mpegts muxer' },
  { list: '-muxers', name: 'segment', what: 'the segment muxer' },
] as const;

/** sfnt (TrueType/OpenType) and collection signatures: enough to tell a font from a missing or wrong file. */
const FONT_MAGIC = ['00010000', '4f54544f', '74727565', '74746366'];

/** Problems that stop this machine rendering segments (empty when it can), each a sentence naming the file at fault. */
export async function renderToolProblems(runner: ProcessRunner, tools: { ffmpeg: string; font: string }): Promise<string[]> {
  const problems: string[] = [];
  try {
    const lists = new Map<string, string>();
    for (const need of NEEDS) {
      lists.set(need.list, lists.get(need.list) ?? (await runner.ffmpeg([need.list], { captureStdout: true })).stdout.toString('utf8'));
      if (!new RegExp(`^\\s*\\S*\\s+${need.name}\\s`, 'm').test(lists.get(need.list)!)) problems.push(`ffmpeg at ${tools.ffmpeg} lacks ${need.what}`);
    }
  } catch (error) {
    problems.push(`ffmpeg at ${tools.ffmpeg} cannot be run: ${(error as Error).message.split('\n')[0]}`);
  }
  try {
    await access(tools.font, constants.R_OK);
    const head = (await readFile(tools.font)).subarray(0, 4).toString('hex');
    if (!FONT_MAGIC.includes(head)) problems.push(`the font ${tools.font} is not a TrueType/OpenType font`);
  } catch {
    problems.push(`the font ${tools.font} cannot be read`);
  }
  return problems;
}
