// The failed-credential limit across instances: three `wmark serve` processes on one PostgreSQL database behind
// HAProxy (trusted for X-Forwarded-For) share one count, so 60 wrong keys sent at once by one client through the
// balancer are exactly 10 answers 401 and 50 answers 429, and another client behind the same balancer is untouched.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../harness/fixtures.js';
import { startHaproxy, type TestHaproxy } from '../../harness/haproxy.js';
import { POSTGRES_MISSING, startPostgres, type TestPostgres } from '../../harness/postgres.js';
import { keyHeaders, rawRequest } from '../../harness/serve-helpers.js';
import { type ServeInstances, startServeInstances } from '../helpers/serve-instances.js';

const INSTANCES = 3;

describe.skipIf(POSTGRES_MISSING !== undefined)(POSTGRES_MISSING ? `skipped: ${POSTGRES_MISSING}` : 'the failed-credential limit behind HAProxy', () => {
  let pg: TestPostgres;
  let serves: ServeInstances;
  let lb: TestHaproxy;
  const dirs = Array.from({ length: INSTANCES }, (_, i) => tempDir(`auth-limit-${i + 1}`));

  beforeAll(async () => {
    pg = await startPostgres();
    const database = await pg.createDatabase();
    serves = await startServeInstances(INSTANCES, {
      dataDir: (i) => dirs[i]!,
      args: () => ['--trust-proxy', '127.0.0.1', '--workers', '1'],
      env: { WMARK_DB_URL: database },
    });
    lb = await startHaproxy({ backends: serves.instances.map((s) => s.port) });
    await lb.untilServers((states) => Object.keys(states).length === INSTANCES && Object.values(states).every((s) => s.status === 'UP'), 'every instance UP');
  }, 180_000);
  afterAll(async () => {
    await lb?.stop();
    await serves?.stopAll();
    await pg?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('60 wrong keys at once from one client, spread over 3 instances: exactly 10 answers 401, then 429', async () => {
    const wrong = (i: number) => ({ 'x-api-client-id': serves.credentials!.clientId, 'x-api-key': `wmk_wrong_${i}` });
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => rawRequest(lb.url, '/1.0/authenticate/accessToken', { headers: wrong(i), localAddress: '127.0.0.2' })),
    );
    const tally: Record<number, number> = {};
    for (const r of answers) tally[r.status] = (tally[r.status] ?? 0) + 1;
    expect(tally).toEqual({ 401: 10, 429: 50 });
    // Every instance answered some of them: the count held across processes, not within one.
    const servers = await lb.servers();
    for (const name of Object.keys(servers)) expect(servers[name]!.sessions, name).toBeGreaterThan(0);
    // The right key from that client is refused too; from another client behind the balancer it works.
    expect((await rawRequest(lb.url, '/1.0/authenticate/accessToken', { headers: keyHeaders(serves.credentials!), localAddress: '127.0.0.2' })).status).toBe(
      429,
    );
    expect((await rawRequest(lb.url, '/1.0/authenticate/accessToken', { headers: keyHeaders(serves.credentials!), localAddress: '127.0.0.3' })).status).toBe(
      200,
    );
  }, 60_000);
});
