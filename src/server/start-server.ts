// Starts and stops the HTTP service around an engine: listen, resume unfinished jobs, graceful shutdown.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Engine } from '../engine/engine.js';
import { LocalJobQueue } from '../engine/job-queue.js';
import { createApp } from './app.js';

export interface ServerOptions {
  engine: Engine;
  host: string;
  port: number;
  publicUrl?: string;
  tokenTtlSeconds: number;
  jobConcurrency?: number;
  playableTimeoutMs?: number;
  log?: (line: string) => void;
}

export interface RunningServer {
  url: string;
  server: Server;
  queue: LocalJobQueue;
  resumed: number;
  /** Stops accepting connections, lets in-flight requests finish, stops jobs (they resume on the next start). */
  close(): Promise<void>;
}

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const log = options.log ?? (() => {});
  const queue = new LocalJobQueue(options.engine, options.jobConcurrency ?? 2, log);
  const handle = createApp({ engine: options.engine, queue, publicUrl: options.publicUrl, tokenTtlSeconds: options.tokenTtlSeconds, playableTimeoutMs: options.playableTimeoutMs, log });
  const server = createServer({ keepAliveTimeout: 5_000 }, (req, res) => void handle(req, res));
  server.headersTimeout = 20_000;
  server.requestTimeout = 0;
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
  const resumed = queue.resume();
  let closing: Promise<void> | undefined;
  return {
    url,
    server,
    queue,
    resumed,
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        await queue.close();
        // Requests still waiting on jobs have been answered by now; give stragglers a moment, then cut.
        const timer = setTimeout(() => server.closeAllConnections(), 5_000);
        await stopped;
        clearTimeout(timer);
      })();
      return closing;
    },
  };
}
