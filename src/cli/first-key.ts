// The first API key of a data folder, printed once: whichever of `wmark serve` and `wmark demo` first runs on a folder
// without one creates it, so a newcomer can call the API without reading further (docs/api.md, "Authentication").
import type { IssuedCredential } from '../engine/app/credentials.js';
import type { LocalService } from '../engine/app/local-service.js';
import type { CliContext } from './context.js';

/** The label of the key `wmark demo` calls its own service with: not a key anyone was given, so it does not count. */
export const DEMO_LABEL = 'wmark demo';

/** Creates a key and says it on stderr (once: only its hash is kept) when the data folder has no active key of its own. */
export async function announceFirstKey(ctx: CliContext, local: LocalService, by: 'serve' | 'demo'): Promise<IssuedCredential | undefined> {
  const given = (await local.credentials.list()).filter((k) => k.revokedOn === null && k.label !== DEMO_LABEL);
  if (given.length) return undefined;
  const cred = await local.credentials.create(`created by first \`wmark ${by}\``);
  ctx.output.info(
    [
      'No API credentials existed, so one pair was created. It is shown only this once:',
      `  client id: ${cred.clientId}`,
      `  API key:   ${cred.apiKey}`,
      'Manage credentials with `wmark auth keys list|create|revoke`.',
    ].join('\n'),
  );
  return cred;
}
