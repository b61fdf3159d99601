// `wmark ingest <file-or-url>`: register a video and prepare its working segments.
import type { Command } from 'commander';
import path from 'node:path';
import { ingestVideo, isRemoteSource } from '../../engine/ingest.js';
import { toVideoResource, type VideoResource } from '../../engine/resources.js';
import { action } from '../program.js';
import type { ChalkInstance } from 'chalk';
import { addRemoteOptions, positionalBeforeRemote } from './remote-common.js';
import { remoteIngest, type RemoteIngestOptions } from './remote-ingest.js';

export function registerIngest(program: Command): void {
  const ingest = program
    .command('ingest')
    .description('register a video (local file or http(s) URL) and prepare it for watermarking')
    .argument('[file-or-url]', 'source video')
    .option('--key <key>', 'custom key to refer to the video by (default: the source path or URL)')
    .option('--name <name>', 'human-readable name')
    .option('--forensic', 'also prepare it for FORENSIC watermarks (videos of 5 minutes or more)')
    .action(
      action(async (ctx, given: string | undefined, opts: RemoteIngestOptions, cmd: Command) => {
        let source = positionalBeforeRemote(given, opts, 'file-or-url');
        if (opts.remote !== undefined) return remoteIngest(ctx, source, opts, cmd);
        const engine = await ctx.openEngine();
        // Relative paths are relative to the caller's folder (which, in-process, is not necessarily process.cwd()).
        if (!isRemoteSource(source)) source = path.resolve(ctx.io.cwd, source);
        ctx.output.stage(`ingesting ${source}`);
        const { video, created } = await ingestVideo(
          engine,
          { source, key: opts.key, name: opts.name, enableForensic: opts.forensic },
          {
            onStage: (s) => ctx.output.stage(`${s} ${source}`),
            onProgress: (f) => ctx.output.progress(`normalising ${source} ${(f * 100).toFixed(0)}%`),
          },
        );
        if (!created) ctx.output.info(`already ingested as ${video.id}; nothing to do`);
        const resource = toVideoResource(video);
        ctx.output.result(resource, (c) => renderVideo(resource, c));
      }),
    );
  addRemoteOptions(ingest, { timeoutDefault: '1h' })
    .option('--no-wait', 'remote: return once the service has registered the video, without waiting for its ingest')
    .option('--interval <duration>', 'remote: time between status checks while waiting (default 1s)');
}

export function renderVideo(v: VideoResource, c: ChalkInstance): string {
  const lines = [
    `${c.bold('video')}  ${v.id}`,
    `  key        ${v.key}`,
    `  status     ${v.status === 'INGESTED' ? c.green(v.status) : v.status.startsWith('FAILED') ? c.red(v.status) : c.yellow(v.status)}`,
  ];
  if (v.name) lines.push(`  name       ${v.name}`);
  if (v.width) lines.push(`  picture    ${v.width}x${v.height} @ ${v.frameRate} fps${v.hasAudio ? ', with audio' : ', no audio'}`);
  if (v.duration !== null) lines.push(`  duration   ${v.duration.toFixed(3)} s in ${v.segments} segments`);
  lines.push(`  forensic   ${v.enableForensic ? 'enabled' : 'no'}`);
  if (v.error) lines.push(`  error      ${c.red(v.error)}`);
  return lines.join('\n');
}
