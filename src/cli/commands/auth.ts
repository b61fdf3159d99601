// `wmark auth keys create|list|revoke`: the credentials `wmark serve` accepts (managed offline, in the data dir).
import type { Command } from 'commander';
import { action } from '../action.js';
import { humanDate, renderTable } from '../render.js';

export function registerAuth(program: Command): Command {
  const auth = program
    .command('auth')
    .description('credentials: a token for a remote service (auth login|status|logout), API keys for `wmark serve` (auth keys ...)');
  const keys = auth.command('keys').description('API keys that the local `wmark serve` accepts');
  keys
    .command('create')
    .description('create a client id + API key (the key is shown once)')
    .option('--label <text>', 'what the key is for')
    .action(
      action(async (ctx, opts: { label?: string }) => {
        const cred = await (await ctx.localService()).credentials.create(opts.label);
        ctx.output.result(
          cred,
          (c) => `${c.bold('client id')} ${cred.clientId}\n${c.bold('API key')}   ${cred.apiKey}\n${c.dim('Store the key now: only its hash is kept.')}`,
        );
      }),
    );
  keys
    .command('list')
    .description('list client ids (never the keys)')
    .action(
      action(async (ctx) => {
        const list = await (await ctx.localService()).credentials.list();
        ctx.output.result(list, (c) =>
          list.length
            ? renderTable(
                ['CLIENT ID', 'STATE', 'CREATED', 'LABEL'],
                list.map((k) => [k.clientId, k.revokedOn ? c.red('revoked') : c.green('active'), humanDate(k.createdOn), k.label ?? '']),
                c,
                ctx.output.mode === 'human',
              )
            : c.dim('no API keys yet: `wmark auth keys create`'),
        );
      }),
    );
  keys
    .command('revoke')
    .description('revoke a client id (its tokens stop working at once)')
    .argument('<client-id>')
    .action(
      action(async (ctx, clientId: string) => {
        await (await ctx.localService()).credentials.revoke(clientId);
        ctx.output.result({ clientId, revoked: true }, () => `revoked ${clientId}`);
      }),
    );
  return auth;
}
