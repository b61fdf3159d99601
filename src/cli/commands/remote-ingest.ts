// `wmark ingest --remote`: register a video with a remote service (POST /{v}/videos, DESIGN 3) and, unless --no-wait, follow it until ingested.
import path from 'node:path';
import type { Command } from 'commander';
import type { ChalkInstance } from 'chalk';
import { WmarkError } from '../../core/errors.js';
import { formatSeconds, sleep } from '../../remote/client.js';
import { VIDEO_FINAL, type RemoteVideo } from '../../remote/schemas.js';
import type { CliContext } from '../context.js';
import { openRemote, parseDuration, type RemoteFlags } from './remote-common.js';

export interface RemoteIngestOptions extends RemoteFlags {
  key?: string;
  name?: string;
  forensic?: boolean;
  wait?: boolean;
  interval?: string;
}

/** A URL is sent as it is; anything else is a path on this machine, made absolute because the service has another working folder. */
export function sourceUrlFor(source: string, cwd: string): string {
  return /^https?:\/\//i.test(source) ? source : path.resolve(cwd, source);
}

export async function remoteIngest(ctx: CliContext, source: string, opts: RemoteIngestOptions, _cmd: Command): Promise<number> {
  const intervalMs = opts.interval !== undefined ? parseDuration(opts.interval, '--interval') : 1_000;
  const { session, api: asked } = await openRemote(ctx, opts, { defaultTimeout: '1h' });
  const api = await session.resolveApi(asked);
  const sourceUrl = sourceUrlFor(source, ctx.io.cwd);
  ctx.output.stage(`registering ${source} with ${session.baseUrl}`);
  let video = await session.createVideo(api, {
    sourceUrl,
    ...(opts.key !== undefined ? { key: opts.key } : {}),
    ...(opts.name !== undefined ? { name: opts.name } : {}),
    ...(opts.forensic ? { enableForensic: true } : {}),
  });
  const started = Date.now();
  if (opts.wait !== false) {
    while (!VIDEO_FINAL(video.status)) {
      ctx.output.progress(`ingesting ${source} on ${session.baseUrl}: ${video.status ?? 'waiting'} ${formatSeconds(Date.now() - started)}`);
      if (Date.now() + intervalMs >= session.deadline) {
        throw new WmarkError('TIMEOUT', `timed out: video ${video.id} is still ${video.status} after ${formatSeconds(Date.now() - started)}`, { hint: `Raise ${session.timeoutLabel}, or use --no-wait and check later.` });
      }
      await sleep(intervalMs, ctx.signal);
      video = await session.getVideo(api, video.id);
    }
  }
  ctx.output.result(video, (c) => renderRemoteVideo(video, c));
  if (typeof video.status === 'string' && video.status.startsWith('FAILED')) {
    ctx.output.warn(`ingest failed (${video.status})${typeof video.error === 'string' ? `: ${video.error}` : ''}`);
    return 6;
  }
  return 0;
}

export function renderRemoteVideo(v: RemoteVideo, c: ChalkInstance): string {
  const status = v.status === 'INGESTED' ? c.green(v.status) : v.status?.startsWith('FAILED') ? c.red(v.status) : c.yellow(v.status ?? 'unknown');
  const lines = [`${c.bold('video')}  ${v.id}`, ...(v.key !== undefined ? [`  key        ${v.key}`] : []), `  status     ${status}`];
  if (typeof v.width === 'number' && typeof v.height === 'number') lines.push(`  picture    ${v.width}x${v.height}`);
  if (typeof v.duration === 'number') lines.push(`  duration   ${v.duration.toFixed(3)} s`);
  if (typeof v.enableForensic === 'boolean') lines.push(`  forensic   ${v.enableForensic ? 'enabled' : 'no'}`);
  if (typeof v.error === 'string') lines.push(`  error      ${c.red(v.error)}`);
  return lines.join('\n');
}
