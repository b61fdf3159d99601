// `wmark doctor`: checks that everything the engine needs is present, and says where each piece came from.
import type { ChalkInstance } from 'chalk';
import type { Command } from 'commander';
import { WmarkError } from '../../core/errors.js';
import type { Check } from '../../engine/app/installation-checks.js';
import { action } from '../action.js';
import { flagError } from '../flag-error.js';
import { addMediaOptions, mediaFlags } from '../media-flags.js';

function printChecks(checks: Check[], c: ChalkInstance): string {
  return checks.map((k) => `${k.ok ? c.green('✓') : k.required ? c.red('✗') : c.yellow('!')} ${k.name.padEnd(16)} ${k.detail}`).join('\n');
}

export function registerDoctor(program: Command): void {
  const command = program
    .command('doctor')
    .description(
      "check ffmpeg, ffprobe, filters, font, data dir and database (PostgreSQL with --db: reachable, its schema against this wmark's; nothing is changed) and a render farm's queue and media store",
    )
    .option('--queue <url>', "also check the render farm's Redis and list its workers: redis://HOST:PORT (env WMARK_QUEUE_URL)");
  addMediaOptions(command, 'also check that the shared media store takes writes').action(
    action(async (ctx, opts: { queue?: string; media?: string; s3Endpoint?: string; s3Region?: string }) => {
      ctx.setConfigFlags({ queue: opts.queue });
      // `--db` alone: the database of WMARK_DB_URL or db.url must be there to check (`--db URL` names one).
      const dbAsked = ctx.takeBareDb();
      const config = await ctx.loadConfig();
      if (dbAsked && !config.db) {
        throw flagError('--db', 'a postgres:// URL', '', {
          hint: 'Give `wmark doctor --db postgres://USER:PASSWORD@HOST:PORT/DATABASE`, or set WMARK_DB_URL (db.url in the config).',
        });
      }
      const media = mediaFlags(opts, config);
      const { collectChecks } = await import('../../engine/app/installation-checks.js');
      const checks = await collectChecks(config);
      if (config.queue?.url || media.media) {
        // The Redis client and the AWS SDK load only when there is a farm to check.
        const { collectFarmChecks } = await import('../../farm/farm-checks.js');
        checks.push(
          ...(await collectFarmChecks({
            queue: config.queue?.url,
            media: media.media,
            s3: { endpoint: media.s3Endpoint, region: media.s3Region },
            now: Date.now,
          })),
        );
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
