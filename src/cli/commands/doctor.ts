// `wmark doctor`: checks that everything the engine needs is present, and says where each piece came from.
import type { ChalkInstance } from 'chalk';
import type { Command } from 'commander';
import { WmarkError } from '../../core/errors.js';
import { collectChecks, type Check } from '../../engine/installation-checks.js';
import { action } from '../action.js';

function printChecks(checks: Check[], c: ChalkInstance): string {
  return checks.map((k) => `${k.ok ? c.green('✓') : k.required ? c.red('✗') : c.yellow('!')} ${k.name.padEnd(16)} ${k.detail}`).join('\n');
}

export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description('check ffmpeg, ffprobe, filters, font, data dir and database (and a render farm\'s queue and media store)')
    .option('--queue <url>', 'also check the render farm\'s Redis and list its workers: redis://HOST:PORT (env WMARK_QUEUE_URL)')
    .option('--media <url>', 'also check that the shared media store takes writes: s3://BUCKET/PREFIX or a folder (env WMARK_MEDIA_URL)')
    .option('--s3-endpoint <url>', 'an S3-compatible server for --media s3:// (MinIO, Ceph, R2); credentials the AWS SDK\'s usual way')
    .option('--s3-region <region>', 'the bucket\'s region')
    .action(
      action(async (ctx, opts: { queue?: string; media?: string; s3Endpoint?: string; s3Region?: string }) => {
        ctx.setConfigFlags({ queue: opts.queue });
        const config = await ctx.loadConfig();
        const media = opts.media ?? (ctx.io.env.WMARK_MEDIA_URL || undefined);
        const checks = await collectChecks(config);
        if (config.queue?.url || media) {
          // The Redis client and the AWS SDK load only when there is a farm to check.
          const { collectFarmChecks } = await import('../../engine/farm-checks.js');
          checks.push(...(await collectFarmChecks({ queue: config.queue?.url, media, s3: { endpoint: opts.s3Endpoint, region: opts.s3Region } })));
        }
        const ok = checks.every((k) => k.ok || !k.required);
        ctx.output.result({ ok, checks }, (c) => printChecks(checks, c));
        if (!ok) {
          const missing = checks.filter((k) => !k.ok && k.required).map((k) => k.name);
          if (ctx.output.mode !== 'json') ctx.output.warn(`missing: ${missing.join(', ')}`);
          return new WmarkError('DOCTOR_FAILED', '').exitCode;
        }
        return 0;
      }),
    );
}
