// `wmark job run <kind> <id>` (hidden): runs one queued ingest or watermark job to its end in this process; the
// detached worker of a CLI run that returned early (--no-wait).
import type { Command } from 'commander';
import { WmarkError } from '../../core/errors.js';
import { action } from '../action.js';

export function registerJob(program: Command): void {
  program
    .command('job', { hidden: true })
    .description('internal: run a queued job to completion')
    .command('run')
    .argument('<kind>', 'ingest or watermark')
    .argument('<id>', 'the video or watermark id')
    .action(
      action(async (ctx, kind: string, id: string) => {
        if (kind !== 'ingest' && kind !== 'watermark') throw new WmarkError('USAGE', `job run: expected ingest or watermark, got "${kind}"`);
        // Another process holding the job is not an error: it finishes the work, and watchers see its progress.
        const { runJob } = await import('../../engine/app/job-runs.js');
        await runJob(await ctx.openEngine(), { kind, id }, ctx.signal);
      }),
    );
}
