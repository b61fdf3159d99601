// `wmark db copy --to postgres://…`: moves a data folder's state into PostgreSQL, for `--db` (README.md, "State in
// PostgreSQL"), and says what it moved.
import type { Command } from 'commander';
import { action } from '../action.js';

export function registerDb(program: Command): void {
  program
    .command('db')
    .description('the state database: copy a data folder into PostgreSQL')
    .command('copy')
    .description("copy the data folder's state (keys, videos, templates, watermarks, jobs) into an empty PostgreSQL database")
    .requiredOption('--to <url>', 'the database: postgres://USER:PASSWORD@HOST:PORT/DATABASE')
    .action(
      action(async (ctx, opts: { to: string }) => {
        const config = await ctx.loadConfig();
        const { copyStateToDatabase } = await import('../../engine/app/copy-state.js');
        const report = await copyStateToDatabase(config.dataDir, opts.to);
        ctx.output.result(report, (c) =>
          [
            `copied ${c.cyan(report.from)} into ${c.cyan(report.to)}:`,
            ...Object.entries(report.tables).map(([table, n]) => `  ${table.padEnd(12)} ${n}`),
            ...(report.secret ? ['  the secret that signs its links and tokens and seeds its forensic codes'] : []),
            `Use it with --db (or WMARK_DB_URL, db.url in the config); media stays in ${config.dataDir}.`,
          ].join('\n'),
        );
        return 0;
      }),
    );
}
