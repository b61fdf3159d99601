// An IMAGE setting's image, fetched once per request (a URL, or a file where the request is served), checked before
// the request is accepted (declared size, format, then decoded with ffprobe), and kept in the media store under the
// hash of its bytes, with a rendition at the size it is drawn at. Every later render of the watermark (on demand, on a
// farm's worker, after a restart) draws those bytes, whatever the URL serves by then.
import { createHash, randomUUID } from 'node:crypto';
import { readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { type ErrorCode, isWmarkError, WmarkError } from '../../core/errors.js';
import { isHttpUrl } from '../../core/http-url.js';
import { readImageHeader } from '../../core/image-header.js';
import { imagePixels, imageRenditionArgs, renditionProblem } from '../../core/plan/image-drawing.js';
import { IMAGE_LIMITS, type ImageFormat, type ImageRef, type ImageSetting, type Setting } from '../../core/setting-types.js';
import { mediaKeys } from '../data-folder/layout.js';
import type { Engine } from '../engine.js';
import { checkLocalSource, downloadSource } from '../ingest/fetch-source.js';
import { normaliseSource } from '../ingest/register.js';
import { hashFile } from '../ingest/source-identity.js';
import type { SourcePolicy } from '../ingest/source-policy.js';
import type { VideoRecord } from '../state/state-store.js';

/** How long fetching one image may take. */
const IMAGE_FETCH_TIMEOUT_MS = 30_000;

export interface ImageFetchOptions {
  /** What an API client may make the server read (its video sources' policy); undefined: anything (the CLI). */
  policy?: SourcePolicy;
  /** Prefix of the settings' paths in messages (`settings`, or `template.settings` for a rendered template). */
  path: string;
}

/** IMAGE settings with a local path made absolute, as the watermark's identity and every later read need it. */
export function normaliseImageContent(settings: readonly Setting[]): Setting[] {
  return settings.map((s) => (s.type === 'IMAGE' ? { ...s, content: normaliseSource(s.content) } : s));
}

/**
 * The hash of each local IMAGE file's bytes, by its (absolute) path: a file stands for what it holds, so an edited logo
 * is a new watermark and an unchanged one the same. URLs are left out (their identity is the URL: asking again fetches
 * nothing), and so are files the policy forbids or that cannot be read, which resolveImages refuses with the reason.
 */
export async function localImageHashes(settings: readonly Setting[], policy: SourcePolicy | undefined): Promise<Map<string, string>> {
  const hashes = new Map<string, string>();
  for (const s of settings) {
    if (s.type !== 'IMAGE' || isHttpUrl(s.content) || hashes.has(s.content)) continue;
    try {
      const file = await checkLocalSource(s.content, policy);
      if ((await stat(file)).size <= IMAGE_LIMITS.maxBytes) hashes.set(s.content, await hashFile(file));
    } catch {
      // Not hashed: resolving the image says why it cannot be used.
    }
  }
  return hashes;
}

/**
 * Every IMAGE setting with its image fetched, checked and kept, and its rendition for this video's frame made: the
 * settings as the watermark stores them. The same image named twice in one request is fetched once.
 */
export async function resolveImages(engine: Engine, settings: readonly Setting[], video: VideoRecord, options: ImageFetchOptions): Promise<Setting[]> {
  const fetched = new Map<string, Promise<Fetched>>();
  const held: Fetched[] = [];
  try {
    const results = await Promise.allSettled(
      settings.map(async (s, i): Promise<Setting> => {
        if (s.type !== 'IMAGE') return s;
        const at = `${options.path}[${i}]`;
        let image = fetched.get(s.content);
        if (!image) {
          image = fetchImage(engine, s.content, options.policy, at);
          image.then((f) => held.push(f)).catch(() => undefined);
          fetched.set(s.content, image);
        }
        const f = await image;
        await ensureRendition(engine, s, f, video, at);
        return { ...s, image: f.ref };
      }),
    );
    // Every image is settled before the downloads go; the first problem in the settings' order is the one reported.
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    return results.map((r) => (r as PromiseFulfilledResult<Setting>).value);
  } finally {
    await Promise.all(held.filter((f) => f.temporary).map((f) => rm(f.file, { force: true })));
  }
}

interface Fetched {
  ref: ImageRef;
  /** The bytes as a local file (a download, or the file named). */
  file: string;
  temporary: boolean;
}

/** Reads the image (a download under the image's caps, or a file under the policy), checks it and keeps its bytes. */
async function fetchImage(engine: Engine, content: string, policy: SourcePolicy | undefined, at: string): Promise<Fetched> {
  const field = `${at}.content`;
  const remote = isHttpUrl(content);
  const limits = { maxDownloadBytes: IMAGE_LIMITS.maxBytes, downloadTimeoutMs: Math.min(policy?.downloadTimeoutMs ?? Infinity, IMAGE_FETCH_TIMEOUT_MS) };
  let file: string;
  try {
    file = remote
      ? await downloadSource(engine.paths.tmp, content, { sourceRoots: undefined, allowPrivateSources: true, ...policy, ...limits })
      : await checkLocalSource(content, policy);
  } catch (error) {
    throw fetchError(error, field, content);
  }
  try {
    const size = (await stat(file)).size;
    if (size > IMAGE_LIMITS.maxBytes) throw tooLarge(field, `${content} is ${size} bytes`);
    const bytes = await readFile(file);
    const header = readImageHeader(bytes);
    if (!header.ok)
      throw new WmarkError(/animated|GIF|SVG/.test(header.problem) ? 'IMAGE_UNSUPPORTED' : 'NOT_AN_IMAGE', `${field}: ${content} ${header.problem}`);
    const { format, width, height } = header;
    if (width > IMAGE_LIMITS.maxSide || height > IMAGE_LIMITS.maxSide) throw tooLarge(field, `${content} is ${width}x${height} pixels`);
    const ref: ImageRef = { sha256: createHash('sha256').update(bytes).digest('hex'), format, width, height };
    const key = mediaKeys.image(ref.sha256, format);
    // Bytes already kept passed these checks when they were first kept: the same image again is not decoded again.
    if (!(await engine.media.exists(key))) {
      await probeImage(engine, file, ref, field, content);
      await engine.media.put(key, bytes);
    }
    return { ref, file, temporary: remote };
  } catch (error) {
    if (remote) await rm(file, { force: true });
    throw error;
  }
}

const tooLarge = (field: string, what: string) =>
  new WmarkError(
    'IMAGE_TOO_LARGE',
    `${field}: ${what}; images may be up to ${IMAGE_LIMITS.maxBytes / 1024 / 1024} MB and ${IMAGE_LIMITS.maxSide}x${IMAGE_LIMITS.maxSide} pixels`,
  );

/** A fetch's error, worded for the field: where the image could not be read from, or why it may not be. */
function fetchError(error: unknown, field: string, content: string): unknown {
  if (!isWmarkError(error)) return error;
  const codes: Record<string, ErrorCode> = {
    SOURCE_UNREACHABLE: 'IMAGE_UNREACHABLE',
    SOURCE_TIMEOUT: 'IMAGE_UNREACHABLE',
    SOURCE_NOT_FOUND: 'IMAGE_UNREACHABLE',
    SOURCE_NOT_A_FILE: 'IMAGE_UNREACHABLE',
    SOURCE_EMPTY: 'NOT_AN_IMAGE',
    SOURCE_TOO_LARGE: 'IMAGE_TOO_LARGE',
    SOURCE_PATH_FORBIDDEN: 'SOURCE_PATH_FORBIDDEN',
    SOURCE_ADDRESS_FORBIDDEN: 'SOURCE_ADDRESS_FORBIDDEN',
  };
  const messages: Record<string, string> = {
    SOURCE_TIMEOUT: `fetching ${content} took longer than ${IMAGE_FETCH_TIMEOUT_MS / 1000} s`,
    SOURCE_NOT_FOUND: `no such file: ${content}`,
    SOURCE_NOT_A_FILE: `not a regular file: ${content}`,
    SOURCE_EMPTY: `${content} is empty (0 bytes)`,
    SOURCE_TOO_LARGE: `${content} is larger than ${IMAGE_LIMITS.maxBytes} bytes, the most an image may be`,
  };
  const code = codes[error.code];
  if (!code) return error;
  const keepHint = code.startsWith('SOURCE_');
  return new WmarkError(code, `${field}: ${messages[error.code] ?? error.message}`, keepHint && error.hint ? { hint: error.hint } : {});
}

interface ProbeJson {
  streams?: { codec_name?: string; width?: number; height?: number; nb_read_frames?: string; pix_fmt?: string }[];
}

const CODECS: Record<ImageFormat, string> = { png: 'png', jpeg: 'mjpeg', webp: 'webp' };

/** Decodes the image with ffprobe: one frame of the codec and size its header declares, or the request is refused. */
async function probeImage(engine: Engine, file: string, ref: ImageRef, field: string, content: string): Promise<void> {
  const args = [
    '-v',
    'error',
    '-count_frames',
    '-select_streams',
    'v:0',
    '-show_entries',
    'stream=codec_name,width,height,nb_read_frames,pix_fmt',
    '-of',
    'json',
    file,
  ];
  let stream: NonNullable<ProbeJson['streams']>[number] | undefined;
  try {
    const { stdout } = await engine.runner.ffprobe(args);
    stream = (JSON.parse(stdout.toString('utf8')) as ProbeJson).streams?.[0];
  } catch (error) {
    const why = isWmarkError(error) ? error.details[0]?.split('\n').find((l) => l.trim()) : undefined;
    throw new WmarkError('NOT_AN_IMAGE', `${field}: ${content} could not be decoded as an image${why ? ` (${why.trim()})` : ''}`);
  }
  const frames = Number(stream?.nb_read_frames);
  if (!stream || stream.codec_name !== CODECS[ref.format] || stream.width !== ref.width || stream.height !== ref.height) {
    throw new WmarkError('NOT_AN_IMAGE', `${field}: ${content} does not decode as the ${ref.format.toUpperCase()} image its header declares`);
  }
  if (frames > 1) throw new WmarkError('IMAGE_UNSUPPORTED', `${field}: ${content} holds ${frames} frames (an animation); wmark draws still images`);
  if (!(frames === 1)) throw new WmarkError('NOT_AN_IMAGE', `${field}: ${content} decodes to no picture`);
  if (HAS_ALPHA.test(stream.pix_fmt ?? '') && !(await anyOpaquePixel(engine, file))) {
    // Refused rather than warned about: a watermark that draws nothing would pass for a marked video.
    throw new WmarkError('IMAGE_INVISIBLE', `${field}: ${content} is fully transparent (every pixel's alpha is 0), so nothing would be drawn`);
  }
}

/** Pixel formats with an alpha channel (or a palette, which may hold transparent entries). */
const HAS_ALPHA = /^(rgba|bgra|argb|abgr|ya|yuva|gbrap|pal8)/;

/** Whether any pixel of the image has an alpha above 0. */
async function anyOpaquePixel(engine: Engine, file: string): Promise<boolean> {
  const { stdout } = await engine.runner.ffmpeg(
    ['-v', 'error', '-i', file, '-vf', 'format=rgba,alphaextract', '-f', 'rawvideo', '-pix_fmt', 'gray', 'pipe:1'],
    {
      captureStdout: true,
    },
  );
  return stdout.some((alpha) => alpha > 0);
}

/** The image scaled to the size it is drawn at on this video, kept beside it (made once per image and size). */
async function ensureRendition(engine: Engine, s: ImageSetting, f: Fetched, video: VideoRecord, at: string): Promise<void> {
  const size = imagePixels(s, f.ref, video.width ?? 0);
  const problem = renditionProblem(size);
  if (problem) throw new WmarkError('IMAGE_TOO_LARGE', `${at}.width: the image ${problem}`);
  const key = mediaKeys.imageRendition(f.ref.sha256, size);
  if (await engine.media.exists(key)) return;
  const out = path.join(engine.paths.tmp, `rendition-${randomUUID()}.png`);
  try {
    await engine.runner.ffmpeg(imageRenditionArgs(f.file, out, size)).catch((error: unknown) => {
      const why = isWmarkError(error) ? error.details[0]?.split('\n').find((l) => l.trim()) : undefined;
      throw new WmarkError('NOT_AN_IMAGE', `${at}.content: ${s.content} could not be decoded by the renderer${why ? ` (${why.trim()})` : ''}`);
    });
    await engine.media.putFile(key, out, { move: true });
  } finally {
    await rm(out, { force: true });
  }
}
