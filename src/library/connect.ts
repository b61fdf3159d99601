// connect(): the library's way in. With a URL it opens a session with a remote service of the API (`wmark serve`
// included); without one, the embedded engine on this machine's data folder, configured as the CLI is.
import { loadConfig } from '../config/load-config.js';
import type { ApiVersion } from '../core/api-version.js';
import { WmarkError } from '../core/errors.js';
import { isHttpUrl } from '../core/http-url.js';
import { localUrl } from '../core/listen-url.js';
import { openConfiguredEngine } from '../engine/app/configured-engine.js';
import { inProcessJobQueue } from '../engine/app/job-runs.js';
import { LocalService } from '../engine/app/local-service.js';
import { HttpClient } from '../remote/client.js';
import { credentialsPath, normalizeBaseUrl } from '../remote/credentials-store.js';
import { RemoteService } from '../remote/remote-service.js';
import { RemoteSession } from '../remote/session.js';
import { VERSION } from '../version.js';
import { WmarkClient } from './client.js';

export interface ConnectOptions {
  /** A remote service's base URL; without it, the embedded engine. */
  url?: string;
  /** Remote: the client id and API key (default: WMARK_CLIENT_ID and WMARK_API_KEY). */
  clientId?: string;
  apiKey?: string;
  /** The API version of the calls (remote default: 2.0 when the service has it, else 1.0). */
  api?: ApiVersion;
  /** Embedded: the data folder (default: WMARK_HOME, else the one the CLI uses). */
  dataDir?: string;
  /** Embedded: the base of the links in answers (default: where `wmark serve` listens). */
  publicUrl?: string;
}

export async function connect(options: ConnectOptions = {}): Promise<WmarkClient> {
  return options.url === undefined ? connectEmbedded(options) : connectRemote(options.url, options);
}

async function connectRemote(url: string, options: ConnectOptions): Promise<WmarkClient> {
  if (!isHttpUrl(url)) throw new WmarkError('BAD_REMOTE', `url: expected an http(s) URL, got "${url}"`);
  const session = new RemoteSession({
    baseUrl: normalizeBaseUrl(url),
    client: new HttpClient({ userAgent: `wmark/${VERSION}` }),
    env: process.env,
    // Nothing is written there: a session writes only a token it was given from the file.
    credentialsFile: credentialsPath(process.env),
    // A connection lives as long as the program wants; a call is bounded by its signal and each attempt's timeout.
    deadline: Number.POSITIVE_INFINITY,
    timeoutLabel: 'an AbortSignal',
    ...(options.clientId !== undefined ? { clientId: options.clientId } : {}),
    ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
  });
  const service = new RemoteService(session, options.api);
  // Asked now, so that a wrong URL fails here rather than at the first call.
  await service.apiVersion();
  return new WmarkClient(service, async () => {});
}

async function connectEmbedded(options: ConnectOptions): Promise<WmarkClient> {
  const config = await loadConfig({ cwd: process.cwd(), env: process.env, flags: { dataDir: options.dataDir } });
  const engine = await openConfiguredEngine(config);
  const queue = inProcessJobQueue(engine, { concurrency: 1 });
  const baseUrl = options.publicUrl ?? config.publicUrl ?? localUrl(config.server.host, config.server.port);
  const service = new LocalService(engine, { queue, baseUrl, ...(options.api ? { api: options.api } : {}) });
  return new WmarkClient(service, async () => {
    await queue.close();
    await engine.close();
  });
}
