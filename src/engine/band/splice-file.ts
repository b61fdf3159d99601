// Splices files: a shared segment (MPEG-TS, or a raw H.264 stream) and viewers' band streams into spliced segments
// of the same container, each written whole through a temporary name so a reader never sees half of one. The shared
// segment is read and parsed once however many viewers it serves.
import { readFile, rename, writeFile } from 'node:fs/promises';
import type { BandRows } from '../../core/h264/splice-band.js';
import { type PreparedSegment, prepareSharedSegment, spliceViewer } from '../../core/h264/splice-segment.js';

export async function spliceSegmentFile(shared: string, band: string, output: string, rows: BandRows): Promise<void> {
  await spliceSegmentFiles(shared, [{ band, output }], rows);
}

/** One shared segment file, parsed once, spliced with each viewer's band file into that viewer's output file. */
export async function spliceSegmentFiles(
  shared: string | PreparedSegment,
  viewers: readonly { band: string; output: string }[],
  rows: BandRows,
): Promise<void> {
  const prepared = typeof shared === 'string' ? prepareSharedSegment(await readFile(shared)) : shared;
  for (const viewer of viewers) {
    const spliced = spliceViewer(prepared, await readFile(viewer.band), rows);
    const temporary = `${viewer.output}.${process.pid}.tmp`;
    await writeFile(temporary, spliced);
    await rename(temporary, viewer.output);
  }
}
