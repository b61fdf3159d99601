// Writes, reads and URI-rewrites HLS media playlists (RFC 8216) for watermark outputs.
//
// The rewriter exists so the server can hand out a playlist whose every segment, init
// (EXT-X-MAP) and key (EXT-X-KEY) URI carries its own signature: players resolve relative
// URIs against the playlist URL and drop its query, so signing the playlist alone is not
// enough.

export interface PlaylistSegment {
  uri: string;
  /** Seconds. */
  duration: number;
}

export interface WriteMediaPlaylistOptions {
  segments: readonly PlaylistSegment[];
  /**
   * Whole seconds. Defaults to the longest segment rounded up. A playlist that is still
   * growing should pass the planned value: RFC 8216 forbids it changing between reloads.
   */
  targetDuration?: number;
  ended: boolean;
  /** Defaults to VOD once ended and EVENT while segments are still being added. */
  playlistType?: 'VOD' | 'EVENT';
  mediaSequence?: number;
  /** Defaults to true: our segments are closed-GOP and each starts on a keyframe. */
  independentSegments?: boolean;
}

export interface ParsedMediaPlaylist {
  segments: PlaylistSegment[];
  ended: boolean;
  /** 0 when the playlist has no EXT-X-TARGETDURATION. */
  targetDuration: number;
  /** Every tag line other than #EXTINF, trimmed, in order (EXT-X-MAP and EXT-X-KEY included). */
  tags: string[];
  /** URI attributes of EXT-X-MAP tags, in order. */
  maps: string[];
  /** URI attributes of EXT-X-KEY tags, in order (METHOD=NONE has none). */
  keys: string[];
}

export type PlaylistUriKind = 'segment' | 'map' | 'key';

// Six decimals keep frame-accurate timing for any common frame rate without float noise.
const DURATION_DECIMALS = 6;

export function writeMediaPlaylist(options: WriteMediaPlaylistOptions): string {
  const { segments, ended } = options;
  const playlistType = options.playlistType ?? (ended ? 'VOD' : 'EVENT');
  if (playlistType === 'VOD' && !ended) {
    // A VOD playlist promises never to change, so players would not reload it.
    throw new RangeError('a VOD playlist must be ended');
  }
  const mediaSequence = options.mediaSequence ?? 0;
  if (!Number.isSafeInteger(mediaSequence) || mediaSequence < 0) {
    throw new RangeError(`mediaSequence must be a non-negative integer, got ${String(mediaSequence)}`);
  }

  // Formatted once per distinct duration: a title's segments share one or two lengths, and a new viewer's playlist
  // is built on the request path, so it must stay cheap.
  const formatted = new Map<number, string>();
  const extinf: string[] = new Array(segments.length);
  let longest = 0;
  segments.forEach((segment, i) => {
    assertSegment(segment);
    let text = formatted.get(segment.duration);
    if (text === undefined) {
      text = segment.duration.toFixed(DURATION_DECIMALS);
      formatted.set(segment.duration, text);
      longest = Math.max(longest, Number(text));
    }
    extinf[i] = text;
  });
  // RFC 8216 4.3.3.1 only requires rounding to be <= target; rounding up is the safe reading
  // (Apple's validator and several players want every EXTINF <= EXT-X-TARGETDURATION).
  const required = Math.ceil(longest);
  const targetDuration = options.targetDuration ?? Math.max(1, required);
  if (!Number.isSafeInteger(targetDuration) || targetDuration < 1 || targetDuration < required) {
    throw new RangeError(`targetDuration must be an integer >= ${Math.max(1, required)}, got ${String(targetDuration)}`);
  }

  let out = `#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:${targetDuration}\n#EXT-X-MEDIA-SEQUENCE:${mediaSequence}\n#EXT-X-PLAYLIST-TYPE:${playlistType}\n`;
  if (options.independentSegments ?? true) out += '#EXT-X-INDEPENDENT-SEGMENTS\n';
  segments.forEach((segment, i) => {
    out += `#EXTINF:${extinf[i]},\n${segment.uri}\n`;
  });
  if (ended) out += '#EXT-X-ENDLIST\n';
  return out;
}

/** Reads our own playlists back; tolerant of CRLF, blank lines, a BOM and unknown tags. */
export function parseMediaPlaylist(text: string): ParsedMediaPlaylist {
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\n|\r/);
  const result: ParsedMediaPlaylist = { segments: [], ended: false, targetDuration: 0, tags: [], maps: [], keys: [] };
  let sawHeader = false;
  let pendingDuration: number | undefined;

  lines.forEach((raw, index) => {
    const line = raw.trim();
    if (line === '') return;
    if (!sawHeader) {
      if (line !== '#EXTM3U') throw new Error('not an HLS playlist: the first line must be #EXTM3U');
      sawHeader = true;
      result.tags.push(line);
      return;
    }
    if (line.startsWith('#EXTINF:')) {
      const duration = Number.parseFloat(line.slice('#EXTINF:'.length));
      if (!Number.isFinite(duration) || duration < 0) {
        throw new Error(`line ${index + 1}: bad #EXTINF duration: ${line}`);
      }
      pendingDuration = duration;
      return;
    }
    if (line.startsWith('#')) {
      // Plain comments (not #EXT...) carry nothing.
      if (!line.startsWith('#EXT')) return;
      result.tags.push(line);
      if (line.startsWith('#EXT-X-TARGETDURATION:')) {
        result.targetDuration = Number.parseInt(line.slice('#EXT-X-TARGETDURATION:'.length), 10) || 0;
      } else if (line === '#EXT-X-ENDLIST') {
        result.ended = true;
      } else {
        const kind = uriTagKind(line);
        const uri = kind === undefined ? undefined : findUriAttribute(line)?.value;
        if (kind === 'map' && uri !== undefined) result.maps.push(uri);
        if (kind === 'key' && uri !== undefined) result.keys.push(uri);
      }
      return;
    }
    if (pendingDuration === undefined) throw new Error(`line ${index + 1}: segment URI without #EXTINF: ${line}`);
    result.segments.push({ uri: line, duration: pendingDuration });
    pendingDuration = undefined;
  });

  if (!sawHeader) throw new Error('not an HLS playlist: it is empty');
  return result;
}

/**
 * Passes every segment URI line and every URI="..." attribute of EXT-X-MAP / EXT-X-KEY
 * through `mapUri`; every other byte (other tags, comments, blank lines, line endings,
 * surrounding whitespace) is left exactly as it was.
 */
export function rewritePlaylistUris(text: string, mapUri: (uri: string, kind: PlaylistUriKind) => string): string {
  // Odd indexes are the line terminators themselves, so joining restores them exactly.
  const pieces = text.split(/(\r\n|\n|\r)/);
  for (let i = 0; i < pieces.length; i += 2) {
    const line = pieces[i] ?? '';
    const content = line.trim().replace(/^\uFEFF/, '');
    if (content === '') continue;
    if (!content.startsWith('#')) {
      const start = line.indexOf(content);
      const mapped = checkedUri(mapUri(content, 'segment'), 'segment');
      pieces[i] = line.slice(0, start) + mapped + line.slice(start + content.length);
      continue;
    }
    const kind = uriTagKind(content);
    if (kind === undefined) continue;
    const attribute = findUriAttribute(line);
    if (attribute === undefined || attribute.value === '') continue;
    const mapped = checkedUri(mapUri(attribute.value, kind), kind);
    pieces[i] = line.slice(0, attribute.start) + mapped + line.slice(attribute.start + attribute.value.length);
  }
  return pieces.join('');
}

function uriTagKind(line: string): 'map' | 'key' | undefined {
  if (line.startsWith('#EXT-X-MAP:')) return 'map';
  if (line.startsWith('#EXT-X-KEY:')) return 'key';
  return undefined;
}

/**
 * Finds the URI attribute by walking the attribute list (RFC 8216 4.2) rather than by
 * searching for `URI="`, which could also match inside another attribute's quoted value.
 * `start` is the offset of the value (inside the quotes) within `line`.
 */
function findUriAttribute(line: string): { start: number; value: string } | undefined {
  let pos = line.indexOf(':') + 1;
  if (pos === 0) return undefined;
  while (pos < line.length) {
    while (line[pos] === ' ' || line[pos] === '\t') pos += 1;
    const equals = line.indexOf('=', pos);
    if (equals === -1) return undefined;
    const name = line.slice(pos, equals).trim();
    pos = equals + 1;
    if (line[pos] === '"') {
      const close = line.indexOf('"', pos + 1);
      if (close === -1) return undefined;
      if (name === 'URI') return { start: pos + 1, value: line.slice(pos + 1, close) };
      pos = close + 1;
    } else if (name === 'URI') {
      // URI must be quoted; an unquoted one is not ours to guess at.
      return undefined;
    }
    const comma = line.indexOf(',', pos);
    if (comma === -1) return undefined;
    pos = comma + 1;
  }
  return undefined;
}

function checkedUri(uri: string, kind: PlaylistUriKind): string {
  // A newline would inject playlist lines; a quote would end the attribute early.
  const unsafe = uri === '' || /[\r\n]/.test(uri) || (kind === 'segment' ? uri.startsWith('#') || uri.trim() !== uri : uri.includes('"'));
  if (unsafe) {
    throw new RangeError(`mapped ${kind} URI cannot be written into a playlist: ${JSON.stringify(uri)}`);
  }
  return uri;
}

function assertSegment(segment: PlaylistSegment): void {
  if (!Number.isFinite(segment.duration) || segment.duration < 0) {
    throw new RangeError(`segment duration must be a finite number >= 0, got ${String(segment.duration)}`);
  }
  if (segment.uri === '' || segment.uri.trim() !== segment.uri || segment.uri.startsWith('#') || /[\r\n]/.test(segment.uri)) {
    throw new RangeError(`segment URI cannot be written into a playlist: ${JSON.stringify(segment.uri)}`);
  }
}
