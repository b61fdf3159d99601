// A watermark's identity (docs/settings.md, "Identity and expiration"): canonical JSON of its normalised settings,
// hashed with the video id.
import { createHash } from 'node:crypto';
import { isPlainObject } from './issue-text.js';
import type { Setting } from './setting-types.js';

function stableStringify(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableStringify).join(',')}]`;
  if (isPlainObject(v)) {
    const keys = Object.keys(v)
      .filter((k) => v[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${stableStringify(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * `withImages` adds an IMAGE's fetched bytes (their hash): a watermark's identity follows its settings alone, so the
 * same request finds the same watermark without fetching again, but renders shared between watermarks must also agree
 * on the bytes drawn.
 */
function canonicalSetting(s: Setting, withImages: boolean, fileHashes?: ReadonlyMap<string, string>): Record<string, unknown> {
  // Fields are picked by name so a stray extra property on the object cannot change the identity.
  if (s.type === 'FORENSIC') return { type: 'FORENSIC', payload: s.payload };
  const a = s.animation;
  const animation = a === undefined ? undefined : { type: 'MOVE', toX: a.toX, toY: a.toY, startTime: a.startTime, endTime: a.endTime };
  if (s.type === 'IMAGE') {
    return {
      type: 'IMAGE',
      content: s.content,
      x: s.x,
      y: s.y,
      align: s.align,
      verticalAlign: s.verticalAlign,
      width: s.width,
      opacity: s.opacity,
      animation,
      image: withImages ? s.image?.sha256 : undefined,
      file: fileHashes?.get(s.content),
    };
  }
  return {
    type: 'TEXT',
    content: s.content,
    x: s.x,
    y: s.y,
    align: s.align,
    verticalAlign: s.verticalAlign,
    fontSize: s.fontSize,
    fontColor: s.fontColor.toUpperCase(),
    fontOpacity: s.fontOpacity,
    shadowColor: s.shadowColor.toUpperCase(),
    shadowOpacity: s.shadowOpacity,
    shadowOffsetX: s.shadowOffsetX,
    shadowOffsetY: s.shadowOffsetY,
    animation,
  };
}

/**
 * Canonical JSON of normalised settings: keys sorted, every field present, array order kept
 * (it is the drawing order). Equal meaning gives an equal string; any change gives another.
 */
export function canonicalSettings(settings: readonly Setting[], options: { withImages?: boolean; fileHashes?: ReadonlyMap<string, string> } = {}): string {
  return stableStringify(settings.map((s) => canonicalSetting(s, options.withImages ?? false, options.fileHashes)));
}

/**
 * Watermark identity: first 32 hex chars of sha256(videoId + "\n" + canonical settings). `fileHashes` (a local image
 * file's path -> the hash of its bytes) makes a local file stand for its content, not its name.
 */
export function watermarkIdentity(videoId: string, settings: readonly Setting[], fileHashes?: ReadonlyMap<string, string>): string {
  return createHash('sha256')
    .update(`${videoId}\n${canonicalSettings(settings, { fileHashes })}`, 'utf8')
    .digest('hex')
    .slice(0, 32);
}
