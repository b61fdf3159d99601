// Unit tests for HLS media playlists, checked against m3u8-parser as an independent reader.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { type PlaylistSegment, type PlaylistUriKind, parseMediaPlaylist, rewritePlaylistUris, writeMediaPlaylist } from '../../../src/core/playlist.js';

// m3u8-parser is CommonJS without type declarations; require it and type the part we use.
interface ThirdPartyManifest {
  segments: Array<{ uri: string; duration: number; map?: { uri: string }; key?: { uri: string; method: string } }>;
  targetDuration?: number;
  mediaSequence?: number;
  playlistType?: string;
  endList?: boolean;
  version?: number;
  independentSegments?: boolean;
}
const { Parser } = createRequire(import.meta.url)('m3u8-parser') as {
  Parser: new () => { push(text: string): void; end(): void; manifest: ThirdPartyManifest };
};

function thirdPartyParse(text: string): ThirdPartyManifest {
  const parser = new Parser();
  parser.push(text);
  parser.end();
  return parser.manifest;
}

const SEGMENTS: PlaylistSegment[] = [
  { uri: 'seg-00000.ts', duration: 4 },
  { uri: 'seg-00001.ts', duration: 4.004 },
  { uri: 'seg-00002.ts', duration: 2.5 },
];

describe('writeMediaPlaylist', () => {
  it('writes a finished VOD playlist', () => {
    const text = writeMediaPlaylist({ segments: SEGMENTS, ended: true });
    expect(text).toBe(
      [
        '#EXTM3U',
        '#EXT-X-VERSION:3',
        '#EXT-X-TARGETDURATION:5',
        '#EXT-X-MEDIA-SEQUENCE:0',
        '#EXT-X-PLAYLIST-TYPE:VOD',
        '#EXT-X-INDEPENDENT-SEGMENTS',
        '#EXTINF:4.000000,',
        'seg-00000.ts',
        '#EXTINF:4.004000,',
        'seg-00001.ts',
        '#EXTINF:2.500000,',
        'seg-00002.ts',
        '#EXT-X-ENDLIST',
        '',
      ].join('\n'),
    );
  });

  it('is read back by m3u8-parser with the same segments, durations, target and end', () => {
    const manifest = thirdPartyParse(writeMediaPlaylist({ segments: SEGMENTS, ended: true }));
    expect(manifest.segments.map((s) => s.uri)).toEqual(SEGMENTS.map((s) => s.uri));
    expect(manifest.segments.map((s) => s.duration)).toEqual(SEGMENTS.map((s) => s.duration));
    expect(manifest.targetDuration).toBe(5);
    expect(manifest.mediaSequence).toBe(0);
    expect(manifest.playlistType).toBe('VOD');
    expect(manifest.endList).toBe(true);
    expect(manifest.version).toBe(3);
    expect(manifest.independentSegments).toBe(true);
  });

  it('writes a growing EVENT playlist without ENDLIST', () => {
    const text = writeMediaPlaylist({ segments: SEGMENTS.slice(0, 1), ended: false, targetDuration: 5 });
    expect(text).toContain('#EXT-X-PLAYLIST-TYPE:EVENT\n');
    expect(text).not.toContain('#EXT-X-ENDLIST');
    const manifest = thirdPartyParse(text);
    expect(manifest.playlistType).toBe('EVENT');
    expect(manifest.endList).toBeUndefined();
    expect(manifest.segments).toHaveLength(1);
    expect(manifest.targetDuration).toBe(5);
  });

  it('rounds the target duration up, never down', () => {
    const target = (duration: number): number | undefined =>
      thirdPartyParse(writeMediaPlaylist({ segments: [{ uri: 'a.ts', duration }], ended: true })).targetDuration;
    expect(target(4)).toBe(4);
    expect(target(4.000001)).toBe(5);
    expect(target(4.4)).toBe(5);
    // Below the 6 written decimals it is float noise, not a longer segment.
    expect(target(4.0000000001)).toBe(4);
    expect(target(0.2)).toBe(1);
  });

  it('honours explicit options and refuses contradictory ones', () => {
    const text = writeMediaPlaylist({
      segments: SEGMENTS,
      ended: true,
      playlistType: 'EVENT',
      targetDuration: 6,
      mediaSequence: 7,
      independentSegments: false,
    });
    expect(text).toContain('#EXT-X-TARGETDURATION:6\n#EXT-X-MEDIA-SEQUENCE:7\n#EXT-X-PLAYLIST-TYPE:EVENT\n#EXTINF');
    expect(text).not.toContain('INDEPENDENT');
    expect(text.endsWith('#EXT-X-ENDLIST\n')).toBe(true);
    expect(() => writeMediaPlaylist({ segments: SEGMENTS, ended: false, playlistType: 'VOD' })).toThrow(RangeError);
    expect(() => writeMediaPlaylist({ segments: SEGMENTS, ended: true, targetDuration: 4 })).toThrow(RangeError);
    expect(() => writeMediaPlaylist({ segments: SEGMENTS, ended: true, targetDuration: 5.5 })).toThrow(RangeError);
  });

  it('writes an empty growing playlist that still parses', () => {
    const text = writeMediaPlaylist({ segments: [], ended: false, targetDuration: 4 });
    expect(thirdPartyParse(text).segments).toEqual([]);
    expect(parseMediaPlaylist(text)).toMatchObject({ segments: [], ended: false, targetDuration: 4 });
  });

  it('refuses segments that would corrupt the playlist', () => {
    const write = (segment: PlaylistSegment) => () => writeMediaPlaylist({ segments: [segment], ended: true });
    expect(write({ uri: 'a.ts\n#EXT-X-ENDLIST', duration: 4 })).toThrow(RangeError);
    expect(write({ uri: '#a.ts', duration: 4 })).toThrow(RangeError);
    expect(write({ uri: '', duration: 4 })).toThrow(RangeError);
    expect(write({ uri: 'a.ts', duration: Number.NaN })).toThrow(RangeError);
    expect(write({ uri: 'a.ts', duration: -1 })).toThrow(RangeError);
  });
});

describe('parseMediaPlaylist', () => {
  it('reads back what writeMediaPlaylist wrote', () => {
    const parsed = parseMediaPlaylist(writeMediaPlaylist({ segments: SEGMENTS, ended: true }));
    expect(parsed.segments).toEqual(SEGMENTS);
    expect(parsed.ended).toBe(true);
    expect(parsed.targetDuration).toBe(5);
    expect(parsed.tags).toContain('#EXT-X-PLAYLIST-TYPE:VOD');
    expect(parsed.tags.some((tag) => tag.startsWith('#EXTINF'))).toBe(false);
  });

  it('handles CRLF, blank lines, a BOM, comments, titles, MAP and KEY', () => {
    const text = [
      '\uFEFF#EXTM3U',
      '#EXT-X-VERSION:7',
      '',
      '#EXT-X-TARGETDURATION:4',
      '# a plain comment',
      '#EXT-X-MAP:URI="init.mp4"',
      '#EXT-X-KEY:METHOD=AES-128,URI="keys/k1.key",IV=0x0123456789abcdef0123456789abcdef',
      '#EXTINF:3.5,first segment',
      'seg-0.m4s',
      '',
      '#EXT-X-KEY:METHOD=NONE',
      '#EXTINF:4.000000,',
      '  seg-1.m4s  ',
      '#EXT-X-ENDLIST',
      '',
    ].join('\r\n');
    const parsed = parseMediaPlaylist(text);
    expect(parsed.segments).toEqual([
      { uri: 'seg-0.m4s', duration: 3.5 },
      { uri: 'seg-1.m4s', duration: 4 },
    ]);
    expect(parsed.ended).toBe(true);
    expect(parsed.targetDuration).toBe(4);
    expect(parsed.maps).toEqual(['init.mp4']);
    expect(parsed.keys).toEqual(['keys/k1.key']);
    expect(parsed.tags).toContain('#EXT-X-MAP:URI="init.mp4"');
    expect(parsed.tags).not.toContain('# a plain comment');
  });

  it('reports an unfinished playlist and a missing target duration', () => {
    const parsed = parseMediaPlaylist('#EXTM3U\n#EXTINF:4,\na.ts\n');
    expect(parsed).toMatchObject({ ended: false, targetDuration: 0, segments: [{ uri: 'a.ts', duration: 4 }] });
  });

  it('throws on text that is not a media playlist', () => {
    expect(() => parseMediaPlaylist('')).toThrow(/empty/);
    expect(() => parseMediaPlaylist('<html></html>')).toThrow(/#EXTM3U/);
    expect(() => parseMediaPlaylist('#EXTM3U\na.ts\n')).toThrow(/without #EXTINF/);
    expect(() => parseMediaPlaylist('#EXTM3U\n#EXTINF:abc,\na.ts\n')).toThrow(/EXTINF/);
  });
});

describe('rewritePlaylistUris', () => {
  const sign = (uri: string, kind: PlaylistUriKind): string => `${uri}?sig=${kind}`;

  it('rewrites every segment URI and leaves every other line identical', () => {
    const text = writeMediaPlaylist({ segments: SEGMENTS, ended: true });
    const rewritten = rewritePlaylistUris(text, sign);
    const before = text.split('\n');
    const after = rewritten.split('\n');
    expect(after).toHaveLength(before.length);
    after.forEach((line, i) => {
      const original = before[i] ?? '';
      if (original.startsWith('#') || original === '') expect(line).toBe(original);
      else expect(line).toBe(`${original}?sig=segment`);
    });
    expect(thirdPartyParse(rewritten).segments.map((s) => s.uri)).toEqual(SEGMENTS.map((s) => `${s.uri}?sig=segment`));
  });

  it('rewrites URI attributes of EXT-X-MAP and EXT-X-KEY only, keeping CRLF, blank lines and spacing', () => {
    const lines = [
      '#EXTM3U',
      '#EXT-X-VERSION:7',
      '#EXT-X-TARGETDURATION:4',
      '',
      '#EXT-X-MAP:URI="init.mp4",BYTERANGE="720@0"',
      '#EXT-X-KEY:METHOD=AES-128,KEYFORMAT="x,URI=",URI="k.key",IV=0x00000000000000000000000000000001',
      '# URI="comment.ts"',
      '#EXT-X-PROGRAM-DATE-TIME:2030-01-01T00:00:00Z',
      '#EXTINF:4.000000,',
      '  seg-0.m4s\t',
      '#EXT-X-KEY:METHOD=NONE',
      '#EXTINF:4.000000,',
      'https://cdn.example/seg-1.m4s?x=1',
      '#EXT-X-ENDLIST',
      '',
    ];
    const text = lines.join('\r\n');
    const calls: Array<[string, PlaylistUriKind]> = [];
    const rewritten = rewritePlaylistUris(text, (uri, kind) => {
      calls.push([uri, kind]);
      return sign(uri, kind);
    });
    expect(calls).toEqual([
      ['init.mp4', 'map'],
      ['k.key', 'key'],
      ['seg-0.m4s', 'segment'],
      ['https://cdn.example/seg-1.m4s?x=1', 'segment'],
    ]);
    const expected = [...lines];
    expected[4] = '#EXT-X-MAP:URI="init.mp4?sig=map",BYTERANGE="720@0"';
    expected[5] = '#EXT-X-KEY:METHOD=AES-128,KEYFORMAT="x,URI=",URI="k.key?sig=key",IV=0x00000000000000000000000000000001';
    expected[9] = '  seg-0.m4s?sig=segment\t';
    expected[12] = 'https://cdn.example/seg-1.m4s?x=1?sig=segment';
    expect(rewritten).toBe(expected.join('\r\n'));

    const manifest = thirdPartyParse(rewritten);
    expect(manifest.segments[0]?.map?.uri).toBe('init.mp4?sig=map');
    expect(manifest.segments[0]?.key?.uri).toBe('k.key?sig=key');
    expect(manifest.segments[1]?.key).toBeUndefined();
    expect(manifest.segments).toHaveLength(2);
    expect(manifest.endList).toBe(true);
  });

  it('keeps mixed and bare-CR line endings and a missing final newline', () => {
    const text = '#EXTM3U\r\n#EXTINF:4,\na.ts\r#EXTINF:4,\r\n\r\nb.ts';
    expect(rewritePlaylistUris(text, (uri) => `/x/${uri}`)).toBe('#EXTM3U\r\n#EXTINF:4,\n/x/a.ts\r#EXTINF:4,\r\n\r\n/x/b.ts');
  });

  it('is the identity when the mapper is', () => {
    const text = '#EXTM3U\n#EXT-X-MAP:URI="i.mp4"\n#EXTINF:4,\na.ts\n\n#EXT-X-ENDLIST\n';
    expect(rewritePlaylistUris(text, (uri) => uri)).toBe(text);
  });

  it('refuses mapped URIs that would inject lines or break the attribute', () => {
    const playlist = '#EXTM3U\n#EXT-X-MAP:URI="i.mp4"\n#EXTINF:4,\na.ts\n';
    expect(() => rewritePlaylistUris(playlist, (uri) => `${uri}\n#EXT-X-ENDLIST`)).toThrow(RangeError);
    expect(() => rewritePlaylistUris(playlist, (uri, kind) => (kind === 'map' ? `${uri}"` : uri))).toThrow(RangeError);
    expect(() => rewritePlaylistUris(playlist, (uri, kind) => (kind === 'segment' ? `#${uri}` : uri))).toThrow(RangeError);
  });
});
