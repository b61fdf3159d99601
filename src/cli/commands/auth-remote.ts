// `wmark auth login|status|logout`: a token for a remote service, kept 0600 in the config dir; prompts only at an interactive terminal.
import type { Command } from 'commander';
import type { Env } from '../../config/paths.js';
import type { ApiVersion } from '../../core/api-version.js';
import { WmarkError } from '../../core/errors.js';
import type { StoredService } from '../../remote/credentials-store.js';
import { action } from '../action.js';
import type { CliContext } from '../context.js';
import { flagError } from '../flag-error.js';
import { canPrompt } from '../io.js';
import { addRemoteOptions, openRemote, type RemoteFlags } from '../remote-flags.js';

/** The credentials file and the token's clock, loaded with the auth command that uses them (their schemas are zod's). */
const remoteModules = async () => {
  const [store, session] = await Promise.all([import('../../remote/credentials-store.js'), import('../../remote/session.js')]);
  return { ...store, jwtExpiry: session.jwtExpiry, TOKEN_EXPIRY_SKEW_MS: session.TOKEN_EXPIRY_SKEW_MS };
};

export interface Prompter {
  input(message: string): Promise<string>;
  password(message: string): Promise<string>;
}

/** Client id and API key: flags > WMARK_CLIENT_ID / WMARK_API_KEY > prompts (interactive only, key masked); otherwise exit 4 naming what is missing. */
export async function collectLoginCredentials(
  flags: { clientId?: string; apiKey?: string },
  env: Env,
  prompter: Prompter | undefined,
): Promise<{ clientId: string; apiKey: string }> {
  let clientId = flags.clientId?.trim() || env.WMARK_CLIENT_ID?.trim() || undefined;
  let apiKey = flags.apiKey?.trim() || env.WMARK_API_KEY?.trim() || undefined;
  if ((!clientId || !apiKey) && prompter) {
    if (!clientId) clientId = (await prompter.input('Client id')).trim() || undefined;
    if (!apiKey) apiKey = (await prompter.password('API key')).trim() || undefined;
  }
  if (!clientId || !apiKey) {
    const missing = [!clientId && 'the client id (--client-id or WMARK_CLIENT_ID)', !apiKey && 'the API key (--api-key or WMARK_API_KEY)']
      .filter(Boolean)
      .join(' and ');
    throw new WmarkError('CREDENTIALS_REQUIRED', `missing ${missing}`, {
      hint: prompter
        ? 'Both are needed to get a token.'
        : 'Give --client-id and --api-key, or set WMARK_CLIENT_ID and WMARK_API_KEY (wmark prompts for them only at an interactive terminal, never with CI set).',
    });
  }
  return { clientId, apiKey };
}

function inquirerPrompter(ctx: CliContext): Prompter {
  const context = { input: ctx.io.stdin as NodeJS.ReadableStream, output: ctx.io.stderr as unknown as NodeJS.WritableStream, signal: ctx.signal };
  return {
    input: async (message) => (await import('@inquirer/prompts')).input({ message, required: true }, context),
    password: async (message) => (await import('@inquirer/prompts')).password({ message, mask: '*' }, context),
  };
}

interface LoginOptions extends RemoteFlags {
  clientId?: string;
  apiKey?: string;
  saveKey?: boolean;
}

interface SelectOptions {
  remote?: string | true;
  all?: boolean;
}

export function registerRemoteAuth(auth: Command, prompterFor: (ctx: CliContext) => Prompter = inquirerPrompter): void {
  addRemoteOptions(
    auth
      .command('login')
      .description('remote: exchange a client id + API key for a token and keep it (0600) in the config dir')
      .option('--client-id <id>', 'client id (env WMARK_CLIENT_ID; prompted for at a terminal)')
      .option('--api-key <key>', 'API key (env WMARK_API_KEY, which stays out of shell history; prompted for, masked, at a terminal)')
      .option('--save-key', 'also keep the API key in the token file, so an expired token is renewed without WMARK_API_KEY'),
    { timeoutDefault: '1m' },
  ).action(action((ctx, opts: LoginOptions) => login(ctx, opts, prompterFor)));

  auth
    .command('status')
    .description('remote: which service, which client, until when (never the secrets)')
    .option('--remote [url]', 'the service to show (default: WMARK_API_URL, remote.url, or the last login)')
    .action(action(status));

  auth
    .command('logout')
    .description('remote: forget the stored token (and API key) for a service')
    .option('--remote [url]', 'the service to log out of (default: WMARK_API_URL, remote.url, or the last login)')
    .option('--all', 'forget every stored service and remove the token file')
    .action(action(logout));
}

async function login(ctx: CliContext, opts: LoginOptions, prompterFor: (ctx: CliContext) => Prompter): Promise<number> {
  const { saveService } = await remoteModules();
  const { session, api, file, timeoutMs } = await openRemote(ctx, opts, { defaultTimeout: '1m' });
  const creds = await collectLoginCredentials(opts, ctx.io.env, canPrompt(ctx.io) ? prompterFor(ctx) : undefined);
  // Time spent typing at the prompts does not count against --timeout.
  session.restartClock(timeoutMs);
  ctx.output.stage(`logging in to ${session.baseUrl}`);
  const issued = await session.issueToken(creds.clientId, creds.apiKey);
  // Which versions the service speaks is remembered, so later commands need not ask again.
  let detected: ApiVersion | undefined = api;
  if (!detected) detected = await session.detectApi().catch(() => undefined);
  const entry: StoredService = {
    baseUrl: session.baseUrl,
    clientId: creds.clientId,
    token: issued.token,
    expiresAt: issued.expiresAt,
    obtainedAt: Date.now(),
    ...(detected ? { api: detected } : {}),
    ...(opts.saveKey ? { apiKey: creds.apiKey } : {}),
  };
  await saveService(file, entry);
  const result = {
    baseUrl: entry.baseUrl,
    clientId: entry.clientId,
    expiresAt: entry.expiresAt,
    api: entry.api ?? null,
    apiKeySaved: Boolean(opts.saveKey),
    file,
  };
  ctx.output.result(result, (c) =>
    [
      `${c.green('✓')} logged in to ${c.bold(entry.baseUrl)} as ${entry.clientId}`,
      `  token     ${describeExpiry(entry.expiresAt, Date.now())}`,
      `  api       ${entry.api ?? 'unknown (2.0 is tried first)'}`,
      `  API key   ${opts.saveKey ? 'saved, to renew the token' : 'not saved (renewal needs WMARK_CLIENT_ID and WMARK_API_KEY, or log in again)'}`,
      `  file      ${file}`,
    ].join('\n'),
  );
  return 0;
}

async function selectService(ctx: CliContext, opts: SelectOptions) {
  const { credentialsPath, normalizeBaseUrl, readCredentials } = await remoteModules();
  const url = typeof opts.remote === 'string' ? opts.remote : undefined;
  if (url !== undefined) {
    try {
      normalizeBaseUrl(url);
    } catch {
      throw flagError('--remote', 'an http(s) URL', url, { code: 'BAD_REMOTE', hint: 'e.g. --remote https://watermark.example.com' });
    }
  }
  ctx.setConfigFlags({ remote: url });
  const config = await ctx.loadConfig();
  const file = credentialsPath(ctx.io.env);
  const store = await readCredentials(file);
  const chosen = config.remote.url ?? store.current;
  return { file, store, baseUrl: chosen ? normalizeBaseUrl(chosen) : undefined };
}

async function status(ctx: CliContext, opts: SelectOptions): Promise<number> {
  const { jwtExpiry, looseMode, TOKEN_EXPIRY_SKEW_MS } = await remoteModules();
  const { file, store, baseUrl } = await selectService(ctx, opts);
  const env = ctx.io.env;
  const now = Date.now();
  const entry = baseUrl ? store.services[baseUrl] : undefined;
  const envToken = env.WMARK_TOKEN?.trim() || undefined;
  if (!entry && !envToken) {
    throw new WmarkError('NOT_LOGGED_IN', baseUrl ? `not logged in to ${baseUrl}` : 'not logged in to any service', {
      hint: `Run \`wmark auth login --remote ${baseUrl ?? 'URL'}\`, or set WMARK_TOKEN, or WMARK_CLIENT_ID and WMARK_API_KEY.`,
    });
  }
  const expiresAt = envToken ? jwtExpiry(envToken) : (entry?.expiresAt ?? null);
  const expired = expiresAt !== null && expiresAt - TOKEN_EXPIRY_SKEW_MS <= now;
  const envKey = Boolean(env.WMARK_CLIENT_ID?.trim() && env.WMARK_API_KEY?.trim());
  const apiKey = entry?.apiKey ? 'saved' : envKey ? 'env' : 'none';
  const renewable = apiKey !== 'none';
  const mode = await looseMode(file);
  const result = {
    baseUrl: baseUrl ?? null,
    current: baseUrl !== undefined && baseUrl === store.current,
    clientId: env.WMARK_CLIENT_ID?.trim() || entry?.clientId || null,
    token: { source: envToken ? 'env' : 'store', expiresAt, expired },
    apiKey,
    api: entry?.api ?? null,
    file,
    otherServices: Object.keys(store.services).filter((u) => u !== baseUrl),
  };
  ctx.output.result(result, (c) =>
    [
      `${c.bold('service')}    ${result.baseUrl ?? c.dim('(none: WMARK_TOKEN only)')}${result.current ? c.dim(' (current)') : ''}`,
      `  client id  ${result.clientId ?? c.dim('unknown')}`,
      `  token      ${envToken ? 'from WMARK_TOKEN, ' : ''}${expired ? c.red(describeExpiry(expiresAt, now)) : describeExpiry(expiresAt, now)}${expired && renewable ? c.dim(' (renewed on next use)') : ''}`,
      `  API key    ${apiKey === 'saved' ? 'saved in the token file' : apiKey === 'env' ? 'from WMARK_CLIENT_ID / WMARK_API_KEY' : 'not saved (an expired token needs a new login, or WMARK_CLIENT_ID and WMARK_API_KEY)'}`,
      `  api        ${result.api ?? 'unknown'}`,
      `  file       ${file}${mode !== undefined ? c.yellow(` (mode ${mode.toString(8)}: readable by others, run chmod 600)`) : ''}`,
      ...(result.otherServices.length ? [`  also       ${result.otherServices.join(', ')}`] : []),
    ].join('\n'),
  );
  // Scripts can test `wmark auth status`: 0 while a token is usable (or renewable), 4 otherwise.
  return expired && !renewable ? 4 : 0;
}

async function logout(ctx: CliContext, opts: SelectOptions): Promise<number> {
  const { removeServices } = await remoteModules();
  const { file, baseUrl } = await selectService(ctx, opts);
  const target = opts.all ? 'all' : baseUrl;
  const removed = target ? await removeServices(file, target) : [];
  ctx.output.result({ removed, file }, () =>
    removed.length ? removed.map((u) => `logged out of ${u}`).join('\n') : `not logged in${baseUrl && !opts.all ? ` to ${baseUrl}` : ''}; nothing to do`,
  );
  if (ctx.io.env.WMARK_TOKEN?.trim()) ctx.output.warn('WMARK_TOKEN is still set in the environment and is used until you unset it');
  return 0;
}

function describeExpiry(expiresAt: number | null, now: number): string {
  if (expiresAt === null) return 'expiry unknown';
  const iso = new Date(expiresAt).toISOString();
  const left = expiresAt - now;
  if (left <= 0) return `expired at ${iso}`;
  const mins = Math.round(left / 60_000);
  return `valid until ${iso} (${mins < 120 ? `${mins} min` : `${Math.round(mins / 60)} h`} left)`;
}
