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
    .description('check ffmpeg, ffprobe, filters, font, data dir and database')
    .action(
      action(async (ctx) => {
        const config = await ctx.loadConfig();
        const checks = await collectChecks(config);
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
