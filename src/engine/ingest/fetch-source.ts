// Where an ingest's bytes come from: a local file (checked), or an http(s) URL streamed into the data dir's tmp folder.
import { randomUUID } from 'node:crypto';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { createWriteStream, type Stats } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { isWmarkError, WmarkError } from '../../core/errors.js';
import { checkSourceAddress, checkSourcePath, type SourcePolicy } from './source-policy.js';

export async function checkLocalSource(file: string, policy?: SourcePolicy): Promise<string> {
  const absolute = path.resolve(file);
  await checkSourcePath(policy, absolute);
  let info: Stats;
  try {
    info = await stat(absolute);
  } catch {
    throw new WmarkError('SOURCE_NOT_FOUND', `source file not found: ${file}`, { hint: 'Check the path, or pass an http(s) URL.' });
  }
  if (!info.isFile()) throw new WmarkError('SOURCE_NOT_A_FILE', `source is not a regular file: ${file}`);
  if (info.size === 0) throw new WmarkError('SOURCE_EMPTY', `source file is empty (0 bytes): ${file}`);
  return absolute;
}

/** Redirects followed before a download is given up. */
const MAX_REDIRECTS = 5;

/**
 * Streams an http(s) source into `tmpDir` (on the media filesystem, so it can be renamed) and returns the file. Under a
 * policy (an API client's ingest) every connection's address is checked, redirects included, and size and time capped.
 */
export async function downloadSource(tmpDir: string, url: string, policy?: SourcePolicy): Promise<string> {
  let ext = '';
  try {
    ext = path.extname(new URL(url).pathname);
  } catch {
    // the request below reports the malformed URL.
  }
  const file = path.join(tmpDir, `download-${randomUUID()}${/^\.[A-Za-z0-9]{1,8}$/.test(ext) ? ext : ''}`);
  const unreachable = (why: string) =>
    new WmarkError('SOURCE_UNREACHABLE', `could not read ${url}: ${why}`, { hint: 'Check the URL, and that the server is up and reachable from here.' });
  const deadline = new AbortController();
  const timer = policy ? setTimeout(() => deadline.abort(), policy.downloadTimeoutMs) : undefined;
  const timedOut = () => new WmarkError('SOURCE_TIMEOUT', `the download of ${url} took longer than ${Math.round(policy!.downloadTimeoutMs / 1000)} s`);
  try {
    let response: IncomingMessage | undefined;
    let current = url;
    for (let hop = 0; ; hop++) {
      response = await get(current, policy, deadline.signal).catch((error: unknown) => {
        if (isWmarkError(error)) throw error;
        if (deadline.signal.aborted) throw timedOut();
        const e = error as NodeJS.ErrnoException;
        throw unreachable(e.code && !e.message.includes(e.code) ? `${e.message} (${e.code})` : e.message);
      });
      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      if (status < 300 || status >= 400 || !location) break;
      response.resume();
      if (hop >= MAX_REDIRECTS) throw unreachable(`more than ${MAX_REDIRECTS} redirects`);
      const next = new URL(location, current);
      if (next.protocol !== 'http:' && next.protocol !== 'https:') throw unreachable(`a redirect to ${next.protocol} is not followed`);
      current = next.href;
    }
    const status = response.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      response.resume();
      throw unreachable(`the server answered ${status} ${response.statusMessage ?? ''}`.trim());
    }
    const tooLarge = () =>
      new WmarkError('SOURCE_TOO_LARGE', `${url} is larger than the ${policy!.maxDownloadBytes} bytes this server downloads for an API client`);
    const declared = Number(response.headers['content-length'] ?? NaN);
    if (policy && Number.isFinite(declared) && declared > policy.maxDownloadBytes) {
      response.destroy();
      throw tooLarge();
    }
    await mkdir(tmpDir, { recursive: true });
    let size = 0;
    const cap = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        done(policy && size > policy.maxDownloadBytes ? tooLarge() : null, chunk);
      },
    });
    try {
      await pipeline(response, cap, createWriteStream(file), { signal: deadline.signal });
    } catch (error) {
      await rm(file, { force: true });
      if (isWmarkError(error)) throw error;
      if (deadline.signal.aborted) throw timedOut();
      throw unreachable(`the download failed (${(error as Error).message})`);
    }
  } finally {
    clearTimeout(timer);
  }
  if ((await stat(file)).size === 0) {
    await rm(file, { force: true });
    throw new WmarkError('SOURCE_EMPTY', `source is empty (0 bytes): ${url}`);
  }
  return file;
}

/** One GET; under a policy the address connected to is checked (an IP literal here, a name in the lookup). */
function get(url: string, policy: SourcePolicy | undefined, signal: AbortSignal): Promise<IncomingMessage> {
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return Promise.reject(new Error(`unsupported protocol ${target.protocol}`));
  const host = target.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) checkSourceAddress(policy, target.hostname, host);
  const lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 4);
      const list = addresses as LookupAddress[];
      try {
        for (const a of list) checkSourceAddress(policy, hostname, a.address);
      } catch (refused) {
        return callback(refused as Error, '', 4);
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(target, { method: 'GET', lookup, signal, headers: { 'user-agent': 'wmark', accept: '*/*' } }, resolve);
    req.on('error', (error) => reject((error as { cause?: unknown }).cause instanceof WmarkError ? (error as { cause: unknown }).cause : error));
    req.end();
  });
}
