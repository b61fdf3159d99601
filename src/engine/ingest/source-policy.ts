// What an API client may make the server read when it ingests (README.md, "Security model"). The CLI, run by the
// machine's own user, has no policy: any file it can read, any URL. A server's policy limits local files to
// --source-root folders, refuses http(s) sources on loopback, private or link-local addresses (checked on the address
// actually connected to, so on every redirect and after DNS, not on the name), and caps a download's size and time.
import { open, realpath } from 'node:fs/promises';
import path from 'node:path';
import { WmarkError } from '../../core/errors.js';
import { isPublicAddress } from '../../core/ip-address.js';

export interface SourcePolicy {
  /** Folders local sources must be inside (symbolic links resolved); undefined allows any file. */
  sourceRoots?: readonly string[];
  /** Lets http(s) sources resolve to loopback, private and link-local addresses. */
  allowPrivateSources: boolean;
  maxDownloadBytes: number;
  downloadTimeoutMs: number;
}

/** Caps on a download an API client asks for (README, "Security model"). */
export const SOURCE_DOWNLOAD_LIMITS = { maxDownloadBytes: 8 * 1024 ** 3, downloadTimeoutMs: 30 * 60_000 } as const;

/**
 * The policy of a server bound to `host`: the folders given, or when none are, any file on loopback (a service only
 * this machine reaches) and no file beyond it.
 */
export function serverSourcePolicy(
  host: string,
  options: { sourceRoots?: readonly string[]; allowPrivateSources?: boolean; limits?: Partial<typeof SOURCE_DOWNLOAD_LIMITS> } = {},
): SourcePolicy {
  const roots = options.sourceRoots?.length ? options.sourceRoots.map((r) => path.resolve(r)) : isLoopbackHost(host) ? undefined : [];
  return { sourceRoots: roots, allowPrivateSources: options.allowPrivateSources ?? false, ...SOURCE_DOWNLOAD_LIMITS, ...options.limits };
}

function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** Refuses (403 SOURCE_PATH_FORBIDDEN) a local file outside the policy's folders, after resolving symbolic links. */
export async function checkSourcePath(policy: SourcePolicy | undefined, file: string): Promise<void> {
  if (!policy?.sourceRoots) return;
  const refuse = () =>
    new WmarkError(
      'SOURCE_PATH_FORBIDDEN',
      policy.sourceRoots!.length
        ? `local sources must be inside the server's source folders: ${file} is not`
        : 'this server does not ingest local files for API clients',
    );
  if (!policy.sourceRoots.length) throw refuse();
  // A file that does not exist is reported as such by the caller only when it would be allowed.
  const real = await realpath(file).catch(() => undefined);
  if (real === undefined) {
    if (!policy.sourceRoots.some((root) => isInside(path.resolve(file), root))) throw refuse();
    return;
  }
  for (const root of policy.sourceRoots) {
    const realRoot = await realpath(root).catch(() => undefined);
    if (realRoot && isInside(real, realRoot)) return;
  }
  throw refuse();
}

function isInside(file: string, folder: string): boolean {
  const rel = path.relative(folder, file);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

/** Refuses (403 SOURCE_ADDRESS_FORBIDDEN) an address that is not public, unless the policy allows private sources. */
export function checkSourceAddress(policy: SourcePolicy | undefined, host: string, address: string): void {
  if (!policy || policy.allowPrivateSources || isPublicAddress(address)) return;
  throw new WmarkError(
    'SOURCE_ADDRESS_FORBIDDEN',
    `${host} resolves to a loopback, private or link-local address; this server does not fetch sources from those`,
  );
}

/**
 * Refuses (422 NOT_A_VIDEO) a playlist or manifest (HLS, ffconcat, DASH/SMIL XML) under a policy: ffmpeg would follow
 * the URLs and paths inside it, which no address or folder check above would see.
 */
export async function checkNotAPlaylist(policy: SourcePolicy | undefined, file: string, label: string): Promise<void> {
  if (!policy) return;
  const handle = await open(file, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(64), 0, 64, 0);
    const head = buffer
      .subarray(0, bytesRead)
      .toString('latin1')
      .replace(/^\uFEFF|^\xEF\xBB\xBF/, '')
      .trimStart();
    if (/^(#EXTM3U|ffconcat|<)/i.test(head)) {
      throw new WmarkError('NOT_A_VIDEO', `${label} is a playlist or manifest; API clients can ingest media files only`);
    }
  } finally {
    await handle.close();
  }
}
