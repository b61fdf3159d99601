// The HTTP edge: node:http requests turned into plain ApiRequests for the app and its ApiResponses written back (a
// file range streamed through reused read buffers); listening, resuming unfinished jobs, and a graceful shutdown (a
// drain first, when asked for: see `close`).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { changeLine } from '../../core/dependency.js';
import { WmarkError } from '../../core/errors.js';
import type { TrustedProxies } from '../../core/forwarded-for.js';
import { localUrl } from '../../core/listen-url.js';
import type { LogSink, RequestRecord } from '../../core/log-record.js';
import type { LocalService } from '../../engine/app/local-service.js';
import type { AuthLimitOptions } from '../auth-limit.js';
import { type ApiRequest, type ApiResponse, BODY_LIMIT_BYTES, bodyTooLarge, isFileBody, isStoreBody, parseJsonBody } from '../http-types.js';
import { sendFile } from '../send-file.js';
import { sendStored } from '../store-response.js';
import { type App, createApp } from './app.js';

export interface ServerOptions {
  /** The application layer it serves, made once the server knows its address (the default base of links). */
  service: (baseUrl: string) => LocalService;
  host: string;
  port: number;
  /** Base of the links handed out (--public-url); without it, where the server listens (a wildcard bind: loopback). */
  publicUrl?: string;
  /** Proxies whose X-Forwarded-For names the client (--trust-proxy); without them the header is ignored. */
  trustProxy?: TrustedProxies;
  tokenTtlSeconds: number;
  /** Its messages: requests cut short, unexpected errors, a dependency lost and back (one line each). */
  log?: LogSink;
  /** Hears every request once its answer is written (the access log). */
  logRequest?: (record: RequestRecord) => void;
  /** GET /metrics answers callers on other machines too (--metrics-public). */
  metricsPublic?: boolean;
  /** Origins allowed to call the API from a browser (--cors-origin); default `*`. */
  corsOrigins?: string[];
  /** Failed credential checks allowed per client address (default AUTH_LIMIT). */
  authLimit?: Partial<AuthLimitOptions>;
  /** Overrides of the socket timeouts (tests use short ones); see SERVER_TIMEOUTS. */
  timeouts?: Partial<ServerTimeouts>;
}

interface ServerTimeouts {
  /** From a connection's first byte to the end of a request's headers. */
  headersMs: number;
  /** For a whole request, headers and body (a 1 MB body must arrive at more than ~17 KB/s at the default). */
  requestMs: number;
  /** How long a kept-alive connection may sit idle between requests. */
  keepAliveMs: number;
  /** A socket on which nothing moves either way for this long is closed (long-polls answer well within it). */
  idleMs: number;
}

/** The defaults, documented in the README ("Security model"). */
const SERVER_TIMEOUTS: Readonly<ServerTimeouts> = { headersMs: 20_000, requestMs: 60_000, keepAliveMs: 5_000, idleMs: 180_000 };

export interface RunningServer {
  /** Where it listens, e.g. http://0.0.0.0:8080. */
  url: string;
  /** The base of the links it hands out: its public URL, else `url` (a wildcard bind named by loopback). */
  linkBase: string;
  server: Server;
  app: App;
  service: LocalService;
  /** Unfinished jobs found at start and queued again. */
  resumed: number;
  /**
   * Stops accepting connections and stops jobs (they resume on the next start); requests in flight get until
   * `timeoutMs` (default 10 s) to finish, then their connections are closed. With `drainMs`, it drains first, for that
   * long: /readyz answers 503 SHUTTING_DOWN at once, so a load balancer stops sending requests here, and every answer
   * ends its connection (`Connection: close`), so no kept-alive connection is left to be cut later; every request is
   * still answered as usual meanwhile.
   */
  close(options?: { timeoutMs?: number; drainMs?: number }): Promise<void>;
}

/** How long requests in flight get to finish when the server stops, unless told otherwise. */
const SHUTDOWN_TIMEOUT_MS = 10_000;

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const log = options.log ?? (() => {});
  let app: App | undefined;
  /** Set when a drain begins, and never cleared: the process is on its way out. */
  let draining = false;
  const t = { ...SERVER_TIMEOUTS, ...options.timeouts };
  const server = createServer(
    {
      keepAliveTimeout: t.keepAliveMs,
      headersTimeout: t.headersMs,
      requestTimeout: t.requestMs,
      // Node checks the header and request deadlines on this tick (30 s by default, which would blur short ones).
      connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(Math.min(t.headersMs, t.requestMs) / 4))),
    },
    (req, res) => void serve(app!, req, res, log, () => draining),
  );
  // A socket where nothing moves is ended; the default 'timeout' handler would leave it open.
  server.setTimeout(t.idleMs, (socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${options.host === 'localhost' ? 'localhost' : host}:${address.port}`;
  const linkBase = options.publicUrl ?? localUrl(options.host === 'localhost' ? 'localhost' : address.address, address.port);
  const service = options.service(linkBase);
  app = createApp({
    service,
    linkBase,
    publicUrl: options.publicUrl,
    trustProxy: options.trustProxy,
    tokenTtlSeconds: options.tokenTtlSeconds,
    stopping: () => draining,
    log,
    logRequest: options.logRequest,
    metricsPublic: options.metricsPublic,
    corsOrigins: options.corsOrigins,
    authLimit: options.authLimit,
  });
  // One line when a dependency is lost, one when it is back; its reconnects and probes back off in silence.
  const unwatch = service.operations.watchDependencies((status, away) => log(changeLine(status, Date.now(), away), { level: status.up ? 'info' : 'warn' }));
  const resumed = await service.queue.resume();
  let closing: Promise<void> | undefined;
  return {
    url,
    linkBase,
    server,
    app,
    service,
    resumed,
    close({ timeoutMs = SHUTDOWN_TIMEOUT_MS, drainMs = 0 } = {}) {
      closing ??= (async () => {
        if (drainMs > 0) {
          draining = true;
          await new Promise((resolve) => setTimeout(resolve, drainMs));
        }
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        // Whatever a dependency does, the requests in flight are cut at the deadline.
        let timer: NodeJS.Timeout | undefined;
        const deadline = new Promise<void>((resolve) => {
          timer = setTimeout(() => {
            server.closeAllConnections();
            resolve();
          }, timeoutMs);
        });
        // Jobs stop at once (abortable waits) and resume on the next start; they are waited for, so none still writes
        // when the engine closes, but only until the deadline: one stuck on a dead socket is left to the next start.
        await Promise.race([service.queue.close(), deadline]);
        await stopped;
        clearTimeout(timer);
        unwatch();
        app?.close();
      })();
      return closing;
    },
  };
}

async function serve(app: App, req: IncomingMessage, res: ServerResponse, log: LogSink, draining: () => boolean): Promise<void> {
  const started = performance.now();
  const rawUrl = req.url ?? '/';
  const query = rawUrl.indexOf('?');
  let url: URL | undefined;
  const request: ApiRequest = {
    method: req.method ?? 'GET',
    rawUrl,
    path: query < 0 ? rawUrl : rawUrl.slice(0, query),
    // Parsed on first use: a segment GET reads only the raw URL, and the parse shows in its CPU per request.
    get url() {
      url ??= new URL(rawUrl, 'http://wmark.invalid');
      return url;
    },
    headers: req.headers as Record<string, string | undefined>,
    body: () => readBody(req),
    remoteAddress: req.socket.remoteAddress,
  };
  const response = await app.handle(request);
  // A request body nobody read must be drained, or the connection stalls.
  if (!req.readableEnded) req.resume();
  if (res.destroyed) {
    // A store's body opened for the answer holds a connection to the store until it is let go.
    if (isStoreBody(response.body)) response.body.stream.destroy();
    const fields = { reqId: response.headers['X-Request-Id'], method: request.method, route: response.route };
    return log(`${request.method} ${request.path}: the client closed the connection before the answer`, fields);
  }
  // Draining: the connection ends with this answer, so a client (a load balancer's pool) sends nothing more on it.
  if (draining()) res.setHeader('Connection', 'close');
  await write(req, res, response);
  app.finished(request, response, performance.now() - started);
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > BODY_LIMIT_BYTES) throw bodyTooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > BODY_LIMIT_BYTES) throw bodyTooLarge();
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    if (error instanceof WmarkError) throw error;
    throw new WmarkError('CLIENT_CLOSED', 'the client closed the connection before sending its whole body');
  }
  return parseJsonBody(Buffer.concat(chunks), req.headers['content-type']);
}

async function write(req: IncomingMessage, res: ServerResponse, response: ApiResponse): Promise<void> {
  const head = req.method === 'HEAD';
  const { body } = response;
  if (isFileBody(body)) {
    res.writeHead(response.status, response.headers);
    if (head) return void res.end();
    await sendFile(res, body.file, body.start, body.end);
    return;
  }
  if (isStoreBody(body)) {
    res.writeHead(response.status, response.headers);
    if (head) {
      body.stream.destroy();
      return void res.end();
    }
    await sendStored(res, body);
    return;
  }
  const headers =
    body === undefined || 'Content-Length' in response.headers ? response.headers : { ...response.headers, 'Content-Length': String(Buffer.byteLength(body)) };
  res.writeHead(response.status, headers);
  res.end(head ? undefined : body);
}
