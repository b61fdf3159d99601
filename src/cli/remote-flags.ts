// The flags of remote mode (--remote, --api, --timeout) and turning them, with env, config and the token file, into a
// session with the chosen service.
import { type Command, Option } from 'commander';
import type { ConfigFlags, ResolvedConfig } from '../config/load-config.js';
import type { ApiVersion } from '../core/api-version.js';
import { parseDuration } from '../core/duration.js';
import { WmarkError } from '../core/errors.js';
import { isHttpUrl } from '../core/http-url.js';
import { formatSeconds, HttpClient } from '../remote/client.js';
import type { CredentialsFile, StoredService } from '../remote/credentials-store.js';
import type { RemoteSession } from '../remote/session.js';
import { VERSION } from '../version.js';
import { flagError } from './flag-error.js';
import { REMOTE_GROUP } from './help.js';
import type { CliIO } from './io.js';

/** What the remote flags need of a CLI run: its streams and environment, its config, and where messages go. */
export interface RemoteContext {
  readonly io: CliIO;
  readonly signal: AbortSignal | undefined;
  readonly output: { info(message: string): void };
  setConfigFlags(flags: ConfigFlags): void;
  loadConfig(): Promise<ResolvedConfig>;
}

export interface RemoteFlags {
  remote?: string | true;
  api?: string;
  timeout?: string;
}

export const DEFAULT_TIMEOUT = '15m';

/** Adds `--remote [url]`, `--api` (unless the command has its own) and `--timeout`. */

export function addRemoteOptions(cmd: Command, options: { api?: boolean; timeoutDefault?: string } = {}): Command {
  cmd.addOption(new Option('--remote [url]', 'a remote service (default: WMARK_API_URL, remote.url, or the last login)').helpGroup(REMOTE_GROUP));
  if (options.api ?? true) {
    cmd.addOption(
      new Option('--api <version>', 'the API to call (default 2.0 when the service has it, else 1.0; env WMARK_API_VERSION)')
        .choices(['1.0', '2.0'])
        .helpGroup(REMOTE_GROUP),
    );
  }
  cmd.addOption(
    new Option('--timeout <duration>', `give up after this long: exit 124 (default ${options.timeoutDefault ?? DEFAULT_TIMEOUT})`).helpGroup(REMOTE_GROUP),
  );
  return cmd;
}

/**
 * The command's one positional argument (declared optional), recovered when `--remote` swallowed it: in `ingest
 * --remote movie.mp4` the flag's optional URL took the path. A value that is not an http(s) URL was the argument, and
 * --remote then means the default service. Missing altogether: the usage error commander would have given.
 */
export function positionalBeforeRemote(given: string | undefined, flags: RemoteFlags, name: string): string {
  if (given === undefined && typeof flags.remote === 'string' && !isHttpUrl(flags.remote)) {
    given = flags.remote;
    flags.remote = true;
  }
  if (given === undefined) throw new WmarkError('USAGE', `missing required argument '${name}'`);
  return given;
}

/** A duration flag: `90`, `90s`, `5m`, `1h30m`, `1.5s` as milliseconds (a bare number is seconds). */
export function durationFlag(text: string, flag: string): number {
  const t = text.trim();
  const parsed = /^\d+(\.\d+)?$/.test(t) ? { ok: true as const, ms: Number(t) * 1000 } : parseDuration(t);
  if (!parsed.ok || parsed.ms <= 0) throw flagError(flag, 'a duration such as 30s, 5m or 1h (a bare number is seconds)', text, { code: 'BAD_DURATION' });
  return Math.round(parsed.ms);
}

export function countFlag(text: string, flag: string, max: number): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || n < 1 || n > max) throw flagError(flag, `a whole number from 1 to ${max}`, text);
  return n;
}

export interface OpenedRemote {
  session: RemoteSession;
  /** The version asked for (flag, WMARK_API_VERSION, config); undefined = let the session find out. */
  api?: ApiVersion;
  store: CredentialsFile;
  stored?: StoredService;
  file: string;
  timeoutMs: number;
}

/** The base URL: --remote URL > WMARK_API_URL > remote.url in the config > the service of the last login. */
export async function openRemote(ctx: RemoteContext, flags: RemoteFlags, options: { apiFlag?: string; defaultTimeout?: string } = {}): Promise<OpenedRemote> {
  const url = typeof flags.remote === 'string' ? flags.remote : undefined;
  if (url !== undefined && !isHttpUrl(url))
    throw flagError('--remote', 'an http(s) URL', url, { code: 'BAD_REMOTE', hint: 'e.g. --remote https://watermark.example.com' });
  const timeout = flags.timeout ?? options.defaultTimeout ?? DEFAULT_TIMEOUT;
  const timeoutMs = durationFlag(timeout, '--timeout');
  // A command whose --api has a default says whether the user gave it; elsewhere the flag is unset unless given.
  ctx.setConfigFlags({ remote: url, api: 'apiFlag' in options ? options.apiFlag : flags.api });
  const config = await ctx.loadConfig();
  // The credentials file's and the session's schemas load with the first remote command, not at every start.
  const [{ credentialsPath, normalizeBaseUrl, readCredentials }, { RemoteSession }] = await Promise.all([
    import('../remote/credentials-store.js'),
    import('../remote/session.js'),
  ]);
  const file = credentialsPath(ctx.io.env);
  const store = await readCredentials(file);
  const chosen = config.remote.url ?? store.current;
  if (!chosen) throw new WmarkError('REMOTE_URL_REQUIRED', 'which service? no remote URL is configured');
  const baseUrl = normalizeBaseUrl(chosen);
  const stored = store.services[baseUrl];
  const session = new RemoteSession({
    baseUrl,
    client: httpClient(ctx),
    env: ctx.io.env,
    credentialsFile: file,
    stored: stored ? { ...stored } : undefined,
    deadline: Date.now() + timeoutMs,
    timeoutLabel: `--timeout (now ${timeout})`,
  });
  return { session, api: config.remote.api, store, stored, file, timeoutMs };
}

/** The HTTP client of a CLI run: Ctrl-C cancels, retries are announced on stderr. */
export function httpClient(ctx: Pick<RemoteContext, 'signal' | 'output'>): HttpClient {
  return new HttpClient({
    signal: ctx.signal,
    userAgent: `wmark/${VERSION}`,
    onRetry: (n) => ctx.output.info(`${n.reason} from ${n.request}; retrying in ${formatSeconds(n.delayMs)}`),
  });
}
