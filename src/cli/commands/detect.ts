// `wmark detect <file>`: find whose copy a leaked video is, from its invisible forensic mark.

import path from 'node:path';
import type { ChalkInstance } from 'chalk';
import type { Command } from 'commander';
import { WmarkError } from '../../core/errors.js';
import type { LocalService } from '../../engine/app/local-service.js';
import { action } from '../action.js';
import { addMediaOptions, type MediaFlags, mediaFlags } from '../media-flags.js';
import { humanDate } from '../render.js';

export function registerDetect(program: Command): void {
  const command = program
    .command('detect')
    .description('read the forensic payload from a leaked copy and name the watermark(s) it was issued to')
    .argument('<file>', 'the leaked copy (any container/codec ffmpeg reads; trimmed, rescaled or re-encoded)')
    .option('--key <key>', 'the original video, by key')
    .option('--video-id <id>', 'the original video, by id');
  addMediaOptions(command, "where a render farm keeps the title's media (its sidecar and layout), with --db for its records; default: this data folder").action(
    action(async (ctx, file: string, opts: { key?: string; videoId?: string } & MediaFlags) => {
      if (!opts.key && !opts.videoId) throw new WmarkError('VIDEO_REQUIRED', 'which original? give --key KEY or --video-id ID');
      const media = mediaFlags(opts, await ctx.loadConfig());
      if (media.media) {
        // Loaded only here: the store's SDK is no cost to a detect on the data folder.
        const { openMediaStore } = await import('../../media/open-media-store.js');
        await ctx.openEngine({ media: openMediaStore(media.media, { endpoint: media.s3Endpoint, region: media.s3Region }) });
      }
      const local = await ctx.localService();
      const result = await local.detect({ key: opts.key, videoId: opts.videoId }, path.resolve(ctx.io.cwd, file), (s) => ctx.output.stage(s));
      ctx.output.result(result, (c) => renderDetect(result, c));
      if (!result.found) return new WmarkError('NO_MARK', 'no forensic mark found').exitCode;
      return 0;
    }),
  );
}

export function renderDetect(r: Awaited<ReturnType<LocalService['detect']>>, c: ChalkInstance): string {
  const lines = [
    `${c.bold('leak')}       ${r.leak.file} (${r.leak.durationSeconds.toFixed(1)} s, ${r.leak.frames} frames)`,
    r.pieces.length <= 1
      ? `${c.bold('aligned')}    at ${r.alignment.offsetSeconds.toFixed(1)} s of the original (correlation ${r.alignment.score.toFixed(3)}${r.pieces[0] && Math.abs(r.pieces[0].scale - 1) > 0.003 ? `, played at ${(1 / r.pieces[0].scale).toFixed(3)}x speed` : ''}); ${r.segmentsRead} of ${r.slotsTotal} code slots read`
      : `${c.bold('aligned')}    ${r.pieces.length} excerpts: ${r.pieces.map((p) => `${p.leakStart.toFixed(0)}-${p.leakEnd.toFixed(0)} s -> ${(p.scale * p.leakStart + p.offset).toFixed(0)} s`).join(', ')}; ${r.segmentsRead} of ${r.slotsTotal} code slots read`,
  ];
  if (r.alignments.length > 1) {
    lines.push(
      `${c.bold('alignments')} ${r.alignments.length} places fit the pictures about as well; each was read, the payload decided, and the bar is z ${r.threshold.toFixed(2)}:`,
    );
    for (const a of r.alignments)
      lines.push(
        `  ${a.chosen ? '*' : ' '} at ${a.offsetSeconds.toFixed(1)} s${a.pieces > 1 ? ` (${a.pieces} excerpts)` : ''}  correlation ${a.alignmentScore.toFixed(3)}  ${a.slotsRead} slots  best payload ${a.payload ?? '-'} z = ${a.z.toFixed(2)}`,
      );
  }
  // A leak frame that is partly something else (a camcorder's dark border, a bezel, a logo) is read without that part.
  const partly = r.geometry.live < 0.97 ? `; ${(r.geometry.live * 100).toFixed(0)}% of the leak frame shows it (the rest is not read)` : '';
  if (r.geometry.w < 0.995 || r.geometry.h < 0.995 || r.geometry.w > 1.005 || r.geometry.h > 1.005 || partly)
    lines.push(
      `${c.bold('geometry')}   shows about ${(r.geometry.w * 100).toFixed(0)}% x ${(r.geometry.h * 100).toFixed(0)}% of the frame${r.geometry.warp.k1 !== 0 || r.geometry.warp.h[6] !== 0 ? ' (warped: perspective/lens)' : ''}${partly}`,
    );
  if (!r.found) {
    if (r.tooShort)
      lines.push(
        c.yellow(
          `too short: the leak lasts ${r.leak.durationSeconds.toFixed(1)} s, and this title's mark names a viewer from ${minutes(r.shortestLeakSeconds)} of it; a copy this short cannot name anyone.`,
        ),
      );
    lines.push(
      `${c.yellow('no forensic mark found')}: the best payload scored z = ${(r.best?.z ?? 0).toFixed(2)}, below the ${Number(r.threshold.toFixed(2))} needed to accuse anyone.`,
    );
    lines.push(c.dim(`  (a score that high happens by chance with probability about ${formatProbability(r.falseAccusation.estimate)})`));
    return lines.join('\n');
  }
  if (r.collusion.suspected)
    lines.push(c.red(`collusion suspected: the leak is best explained by two copies averaged together (pair z = ${r.collusion.z.toFixed(2)})`));
  for (const a of r.accused) {
    lines.push(
      `${c.green('payload')}    ${a.payload}  ascii ${a.ascii !== null ? JSON.stringify(a.ascii) : '-'}  base64 ${a.base64}  z = ${a.z.toFixed(2)}` +
        (r.best && r.best.payload === a.payload ? `  rank 1, gap to runner-up ${r.best.gap.toFixed(2)}` : ''),
    );
    lines.push(
      a.watermarks.length
        ? `  issued as watermark ${a.watermarks.map((w) => `${w.id} (${humanDate(w.createdOn)})`).join(', ')}`
        : c.dim('  no watermark record carries this payload in this data dir'),
    );
  }
  const missed = r.stages.find((s) => !s.accused);
  if (r.collusion.suspected && missed)
    lines.push(c.dim(`  next candidate ${missed.payload} reached only z = ${missed.z.toFixed(2)} after the accused were taken out: not named`));
  lines.push(
    `${c.bold('false accusation')} probability ${formatProbability(r.falseAccusation.estimate)} (estimate; at most ${formatProbability(r.falseAccusation.bound)} whatever the noise)`,
  );
  return lines.join('\n');
}

function formatProbability(p: number): string {
  if (p >= 0.01) return p.toFixed(2);
  if (p === 0) return '0';
  return p.toExponential(1).replace('e-', ' x 10^-');
}

function minutes(seconds: number): string {
  return seconds % 60 === 0 ? `${seconds / 60} minutes` : `about ${(seconds / 60).toFixed(1)} minutes`;
}
