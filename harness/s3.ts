// An S3-protocol server from npm (s3rver) in this process, on a free loopback port, keeping its objects in a temp
// folder: the tests' stand-in for AWS S3 or MinIO, reached through the same AWS SDK calls. It can be stopped and
// started again on the same port with the same objects (a store that goes away mid-load and comes back).
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  httpServer?: Server;
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverInstance;

const require = createRequire(import.meta.url);

export interface TestS3 {
  /** http://127.0.0.1:PORT, for --s3-endpoint. */
  endpoint: string;
  /** s3rver's fixed credentials. */
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** The same as environment variables, for spawned processes (the AWS SDK's usual way). */
  env: Record<string, string>;
  /** Buckets created at start. */
  buckets: string[];
  /** Stops answering (the port is closed) and keeps the objects, for `restart`. */
  halt(): Promise<void>;
  /** Answers again on the same port, with the objects it had. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startS3(options: { buckets?: string[] } = {}): Promise<TestS3> {
  const S3rver = require('s3rver') as S3rverClass;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'wmark-s3-'));
  // s3rver refuses bucket names under 3 characters, as S3 does.
  const buckets = options.buckets ?? ['wmark-test'];
  const make = (port: number) =>
    new S3rver({
      address: '127.0.0.1',
      port,
      silent: true,
      directory: dir,
      // Path-style only: a virtual-host bucket would need DNS for bucket.127.0.0.1.
      vhostBuckets: false,
      configureBuckets: buckets.map((name) => ({ name })),
    });
  let server: S3rverInstance | undefined = make(0);
  const address = await server.run();
  const endpoint = `http://127.0.0.1:${address.port}`;
  // Connections kept alive are cut too: a store that went away answers nobody, not only new connections.
  const halt = async () => {
    const running = server;
    server = undefined;
    const closed = running?.close().catch(() => undefined);
    running?.httpServer?.closeAllConnections();
    await closed;
  };
  const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
  return {
    endpoint,
    credentials,
    env: { AWS_ACCESS_KEY_ID: credentials.accessKeyId, AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey, AWS_REGION: 'us-east-1' },
    buckets,
    halt,
    restart: async () => {
      await halt();
      server = make(address.port);
      await server.run();
    },
    stop: async () => {
      await halt();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
