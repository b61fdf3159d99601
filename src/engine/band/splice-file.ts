// Splices files: a shared segment (MPEG-TS, or a raw H.264 stream) and a viewer's band stream into a spliced
// segment of the same container, written whole through a temporary name so a reader never sees half of one.
import { readFile, rename, writeFile } from 'node:fs/promises';
import type { BandRows } from '../../core/h264/splice-band.js';
import { spliceStreams } from '../../core/h264/splice-band.js';
import { spliceTsSegment } from '../../core/h264/splice-segment.js';

export async function spliceSegmentFile(shared: string, band: string, output: string, rows: BandRows): Promise<void> {
  const [sharedBytes, bandBytes] = await Promise.all([readFile(shared), readFile(band)]);
  // A TS segment starts with a sync byte every 188 bytes; raw H.264 starts with a start code.
  const isTs = sharedBytes[0] === 0x47 && (sharedBytes.length < 189 || sharedBytes[188] === 0x47);
  const spliced = isTs ? spliceTsSegment(sharedBytes, bandBytes, rows) : spliceStreams(sharedBytes, bandBytes, rows);
  const temporary = `${output}.${process.pid}.tmp`;
  await writeFile(temporary, spliced);
  await rename(temporary, output);
}
