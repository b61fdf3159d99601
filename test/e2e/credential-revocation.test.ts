// Credentials kept briefly by each instance, revoked everywhere at once: three `wmark serve` processes on one
// PostgreSQL database each accept a key (and a token made from it) and keep it; `wmark auth keys revoke` run against
// the database then makes the very next request with either on every instance a 401.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runWmark } from '../../harness/cli-helpers.js';
import { tempDir } from '../../harness/fixtures.js';
import { POSTGRES_MISSING, startPostgres, type TestPostgres } from '../../harness/postgres.js';
import { keyHeaders, rawRequest } from '../../harness/serve-helpers.js';
import { type ServeInstances, startServeInstances } from '../helpers/serve-instances.js';

const INSTANCES = 3;

describe.skipIf(POSTGRES_MISSING !== undefined)(POSTGRES_MISSING ? `skipped: ${POSTGRES_MISSING}` : 'a key revoked on one PostgreSQL', () => {
  let pg: TestPostgres;
  let database: string;
  let serves: ServeInstances;
  const dirs = Array.from({ length: INSTANCES }, (_, i) => tempDir(`revoke-${i + 1}`));

  beforeAll(async () => {
    pg = await startPostgres();
    database = await pg.createDatabase();
    serves = await startServeInstances(INSTANCES, { dataDir: (i) => dirs[i]!, args: () => ['--workers', '1'], env: { WMARK_DB_URL: database } });
  }, 180_000);
  afterAll(async () => {
    await serves?.stopAll();
    await pg?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('fails on the next request on every instance, with the key and with a token made from it', async () => {
    const cred = serves.credentials!;
    const token = await rawRequest(serves.instances[0]!.url, '/1.0/authenticate/accessToken', { headers: keyHeaders(cred) });
    expect(token.status).toBe(200);
    const bearer = { authorization: `Bearer ${JSON.parse(token.text).token as string}` };
    // Each instance checks the key and the token a few times: from the second on it answers from what it keeps.
    for (const { url } of serves.instances) {
      for (let i = 0; i < 3; i++) {
        expect((await rawRequest(url, '/2.0/videos', { headers: keyHeaders(cred) })).status, url).toBe(200);
        expect((await rawRequest(url, '/1.0/videos', { headers: bearer })).status, url).toBe(200);
      }
    }

    const revoked = await runWmark(['--data-dir', dirs[0]!, 'auth', 'keys', 'revoke', cred.clientId], { env: { WMARK_DB_URL: database } });
    expect(revoked.code, revoked.stderr).toBe(0);

    for (const { url } of serves.instances) {
      const byKey = await rawRequest(url, '/2.0/videos', { headers: keyHeaders(cred) });
      expect([byKey.status, JSON.parse(byKey.text).code], url).toEqual([401, 'AUTH_INVALID']);
      const byToken = await rawRequest(url, '/1.0/videos', { headers: bearer });
      expect([byToken.status, JSON.parse(byToken.text).code], url).toEqual([401, 'TOKEN_INVALID']);
    }
  }, 120_000);
});
