// Two `wmark serve` processes sharing one data folder behind a real HAProxy (Debian's), configured from the sample
// docs/haproxy.cfg, with --trust-proxy naming it: requests succeed through it on both instances; every link names the
// public URL (HAProxy's frontend), never an instance or a forged Host; the failed-credential limit tells two clients
// behind the proxy apart by X-Forwarded-For, and a forged one does not move it; an instance that stops answering
// /readyz gets no requests until it answers again.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flat, tempDir } from '../../harness/fixtures.js';
import { freePort } from '../../harness/free-port.js';
import { HAPROXY_SAMPLE, startHaproxy, type TestHaproxy } from '../../harness/haproxy.js';
import { bearer, ingestOverHttp, keyHeaders, parseM3u8, type RawReply, rawRequest } from '../../harness/serve-helpers.js';
import { type ServeInstances, startServeInstances } from '../helpers/serve-instances.js';

const KEY = 'balanced-movie';
/** What a client may write to steer links elsewhere; none of it may show up in an answer. */
const FORGED = { host: 'attacker.example', 'x-forwarded-host': 'attacker.example', 'x-forwarded-proto': 'https' };

let dir: string;
let serves: ServeInstances;
let lb: TestHaproxy;
let publicUrl: string;
let headers: Record<string, string>;
/** A 2.0 status link made through the balancer: signed, so it carries no credentials for the limiter to count. */
let statusLink: string;

interface Reply extends RawReply {
  json: any;
}

/** One request through HAProxy, from `from` (a loopback address of its own: another client, as HAProxy sees it). */
async function send(method: string, target: string, options: { headers?: Record<string, string>; body?: unknown; from?: string } = {}): Promise<Reply> {
  const path = target.startsWith('http') ? target.slice(new URL(target).origin.length) : target;
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  const reply = await rawRequest(lb.url, path, {
    method,
    headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...options.headers },
    body,
    localAddress: options.from,
  });
  const json = String(reply.headers['content-type'] ?? '').includes('json') ? JSON.parse(reply.text) : undefined;
  return { ...reply, json };
}

const allUp = (states: Record<string, { status: string; check: string }>) =>
  Object.keys(states).length === 2 && Object.values(states).every((s) => s.status === 'UP' && s.check === 'L7OK');

beforeAll(async () => {
  dir = tempDir('load-balancer');
  // Promised to the instances as their public URL before HAProxy binds it.
  const port = await freePort();
  publicUrl = `http://127.0.0.1:${port}`;
  serves = await startServeInstances(2, { dataDir: () => dir, args: () => ['--public-url', publicUrl, '--trust-proxy', '127.0.0.1', '--workers', '1'] });
  lb = await startHaproxy({ backends: serves.instances.map((s) => s.port), port });
  await lb.untilServers(allUp, 'both instances UP');
  headers = keyHeaders(serves.credentials!);
  await ingestOverHttp(lb.url, headers, await flat('336699', 4), KEY);
}, 120_000);

afterAll(async () => {
  await lb?.stop();
  await serves?.stopAll();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('wmark serve behind HAProxy', () => {
  it('runs the sample config as documented, with only its addresses changed', () => {
    expect(lb.config).toContain('option httpchk GET /readyz');
    expect(lb.config).toContain('option forwardfor');
    expect(lb.config).toContain(`bind 127.0.0.1:${lb.port}`);
    for (const [i, s] of serves.instances.entries()) expect(lb.config).toContain(`server wmark${i + 1} 127.0.0.1:${s.port}\n`);
    expect(lb.config).not.toContain('10.0.0.11');
    expect(HAPROXY_SAMPLE).toMatch(/docs\/haproxy\.cfg$/);
  });

  it('answers through it from both instances, and every link names the public URL, never an instance or a forged Host', async () => {
    const before = await lb.servers();
    const settings = [{ content: 'through the balancer', fontSize: 0.1, fontOpacity: 1 }];
    const v2 = await send('POST', '/2.0/watermark', { headers: { ...headers, ...FORGED }, body: { key: KEY, settings, containers: ['m3u8'] } });
    expect(v2.status, v2.text).toBe(201);
    expect(v2.json.status).toBe('READY');
    statusLink = v2.json.href;
    const token = (await send('GET', '/1.0/authenticate/accessToken', { headers })).json.token as string;
    const v1 = await send('POST', '/1.0/watermark', {
      headers: { ...bearer(token), ...FORGED },
      body: { key: KEY, settings: [{ ...settings[0], content: 'through the balancer, 1.0' }] },
    });
    expect([200, 201], v1.text).toContain(v1.status);
    const polled1 = await send('GET', v1.json.href, { headers: FORGED });
    const polled2 = await send('GET', v2.json.href, { headers: FORGED });
    const player = await send('GET', v2.json.containers.href, { headers: FORGED });
    const home = await send('GET', '/', { headers: { ...FORGED, accept: 'application/json' } });
    const playlist = await send('GET', v2.json.containers.m3u8, { headers: FORGED });
    for (const r of [polled1, polled2, player, home, playlist]) expect(r.status, r.text).toBe(200);
    for (const r of [v2, v1, polled1, polled2, player, home, playlist]) {
      expect(r.text).not.toContain('attacker.example');
      for (const s of serves.instances) expect(r.text).not.toContain(`:${s.port}`);
      for (const url of r.text.match(/https?:\/\/[^"\s\\<>]+/g) ?? []) expect(url.startsWith(`${publicUrl}/`), url).toBe(true);
    }
    expect(Object.values(home.json.docs).length).toBeGreaterThan(0);
    // The playlist's segments, fetched through the balancer like a player does.
    const segments = parseM3u8(playlist.text).segments.map((s) => new URL(s.uri, v2.json.containers.m3u8).href);
    expect(segments.length).toBeGreaterThan(0);
    const segment = await send('GET', segments[0]!);
    expect(segment.status).toBe(200);
    expect(segment.headers['content-type']).toBe('video/mp2t');
    expect(segment.body.length).toBeGreaterThan(1000);
    const after = await lb.servers();
    for (const name of ['wmark1', 'wmark2']) expect(after[name]!.sessions, `${name}\n${lb.log()}`).toBeGreaterThan(before[name]!.sessions);
  });

  it('limits failed credential checks per client behind the proxy, by the address HAProxy saw, whatever X-Forwarded-For the client sends', async () => {
    const wrong = { 'x-api-client-id': serves.credentials!.clientId, 'x-api-key': 'wmk_wrong' };
    const statuses: number[] = [];
    // Both instances count in the one database: guess until both refuse (four 429s in a row), the forged address new
    // each time; 10 guesses were checked in all, not 10 on each.
    for (let i = 0; i < 60 && statuses.slice(-4).join() !== '429,429,429,429'; i++) {
      const r = await send('GET', '/1.0/authenticate/accessToken', { headers: { ...wrong, 'x-forwarded-for': `203.0.113.${i}` }, from: '127.0.0.2' });
      statuses.push(r.status);
    }
    expect(statuses.slice(-4), statuses.join()).toEqual([429, 429, 429, 429]);
    expect(new Set(statuses)).toEqual(new Set([401, 429]));
    expect(statuses.filter((status) => status === 401)).toHaveLength(10);
    for (let i = 0; i < 4; i++) {
      const a = await send('GET', '/1.0/authenticate/accessToken', { headers, from: '127.0.0.2' });
      expect(a.status).toBe(429);
      expect(a.json.code).toBe('RATE_LIMITED');
      expect(a.headers['retry-after']).toMatch(/^\d+$/);
      // Another client behind the same proxy is not affected.
      expect((await send('GET', '/1.0/authenticate/accessToken', { headers, from: '127.0.0.3' })).status).toBe(200);
    }
    // The instances name the client HAProxy saw, never the proxy itself or what the client wrote.
    const logs = serves.stderr(0) + serves.stderr(1);
    expect(logs).toMatch(/failed credential checks from 127\.0\.0\.2:/);
    expect(logs).not.toMatch(/from (127\.0\.0\.1|127\.0\.0\.3|203\.0\.113\.\d+):/);
  });

  it('an instance that stops answering /readyz gets no requests, and gets them again once it is back', async () => {
    await serves.stop(1);
    // Before the health checks notice, a request that finds the instance gone is tried again on the other one.
    for (let i = 0; i < 6; i++) expect((await send('GET', statusLink)).status, lb.log()).toBe(200);
    await lb.untilServers((s) => s.wmark2?.status === 'DOWN', 'wmark2 DOWN', 15_000);
    const down = await lb.servers();
    for (let i = 0; i < 10; i++) expect((await send('GET', statusLink)).status).toBe(200);
    const whileDown = await lb.servers();
    expect(whileDown.wmark2!.sessions).toBe(down.wmark2!.sessions);
    expect(whileDown.wmark1!.sessions - down.wmark1!.sessions).toBe(10);

    await serves.start(1);
    await lb.untilServers(allUp, 'wmark2 UP again', 15_000);
    const up = await lb.servers();
    for (let i = 0; i < 10; i++) expect((await send('GET', statusLink)).status).toBe(200);
    const back = await lb.servers();
    expect(back.wmark2!.sessions).toBeGreaterThan(up.wmark2!.sessions);
  });
});
