// Which IP addresses an API client may make the server fetch from (against SSRF): public unicast only. Loopback,
// private, link-local, CGNAT, multicast, reserved and unspecified ranges are refused, in IPv4 and IPv6, including
// IPv4 addresses carried inside IPv6 (mapped, compatible, NAT64, 6to4). Pure parsing, no DNS.
import ipaddr from 'ipaddr.js';

/** The address's bytes (4 or 16), or undefined when `ip` is not an IPv4 or IPv6 literal (brackets allowed). */
export function ipBytes(ip: string): number[] | undefined {
  const text = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  return ipv4Bytes(text) ?? ipv6Bytes(text.replace(/%.*$/, ''));
}

function ipv4Bytes(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255)) return undefined;
  return parts.map(Number);
}

function ipv6Bytes(text: string): number[] | undefined {
  if (!/^[0-9a-fA-F:.]+$/.test(text) || text.split('::').length > 2) return undefined;
  let body = text;
  if (text.includes('.')) {
    // A trailing dotted IPv4 part stands for the last two groups.
    const lastColon = text.lastIndexOf(':');
    const v4 = ipv4Bytes(text.slice(lastColon + 1));
    if (!v4) return undefined;
    body = `${text.slice(0, lastColon + 1)}${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`;
  }
  const halves = body.split('::');
  const parse = (s: string) => (s === '' ? [] : s.split(':'));
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const groups = [...head, ...Array<string>(missing).fill('0'), ...tail];
  if (!groups.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return undefined;
  return groups.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 0xff]);
}

const V4_BLOCKED: ReadonlyArray<[number[], number]> = [
  [[0, 0, 0, 0], 8], // "this network", unspecified
  [[10, 0, 0, 0], 8], // private
  [[100, 64, 0, 0], 10], // carrier-grade NAT
  [[127, 0, 0, 0], 8], // loopback
  [[169, 254, 0, 0], 16], // link-local (cloud metadata lives here)
  [[172, 16, 0, 0], 12], // private
  [[192, 0, 0, 0], 24], // IETF protocol assignments
  [[192, 0, 2, 0], 24], // documentation
  [[192, 88, 99, 0], 24], // 6to4 relay anycast
  [[192, 168, 0, 0], 16], // private
  [[198, 18, 0, 0], 15], // benchmarking
  [[198, 51, 100, 0], 24], // documentation
  [[203, 0, 113, 0], 24], // documentation
  [[224, 0, 0, 0], 4], // multicast
  [[240, 0, 0, 0], 4], // reserved, broadcast
];

/** True when the first `bits` bits of `bytes` are those of `prefix` (missing prefix bytes count as zero). */
export function inPrefix(bytes: readonly number[], prefix: readonly number[], bits: number): boolean {
  for (let i = 0; i < bits; i++) {
    const mask = 0x80 >> (i % 8);
    if ((bytes[i >> 3]! & mask) !== ((prefix[i >> 3] ?? 0) & mask)) return false;
  }
  return true;
}

/** True only for a public unicast address; anything unparsable is not public. */
export function isPublicAddress(ip: string): boolean {
  const bytes = ipBytes(ip);
  if (!bytes) return false;
  if (bytes.length === 4) return !V4_BLOCKED.some(([prefix, bits]) => inPrefix(bytes, prefix, bits));
  const v4 = (from: number) =>
    bytes
      .slice(from, from + 4)
      .map(String)
      .join('.');
  // IPv4 inside IPv6: ::a.b.c.d, ::ffff:a.b.c.d, 64:ff9b::a.b.c.d (NAT64), 2002:AABB:CCDD:: (6to4).
  if (inPrefix(bytes, [], 80) && ((bytes[10] === 0 && bytes[11] === 0) || (bytes[10] === 0xff && bytes[11] === 0xff))) {
    return inPrefix(bytes, [], 96) && bytes.slice(12).every((b) => b === 0) ? false : isPublicAddress(v4(12));
  }
  if (inPrefix(bytes, [0, 0x64, 0xff, 0x9b], 96)) return isPublicAddress(v4(12));
  if (inPrefix(bytes, [0x20, 0x02], 16)) return isPublicAddress(v4(2));
  const blocked: Array<[number[], number]> = [
    [[0xfc], 7], // unique local
    [[0xfe, 0x80], 10], // link-local
    [[0xfe, 0xc0], 10], // site-local (deprecated)
    [[0xff], 8], // multicast
    [[0x20, 0x01, 0x0d, 0xb8], 32], // documentation
    [[0x01, 0, 0, 0, 0, 0, 0, 0], 64], // discard
  ];
  return !blocked.some(([prefix, bits]) => inPrefix(bytes, prefix, bits));
}

/** True for 127.0.0.0/8, ::1 and an IPv4 loopback address mapped into IPv6 (::ffff:127.x.y.z): a peer on this machine. */
export function isLoopbackAddress(ip: string): boolean {
  const bytes = ipBytes(ip);
  if (!bytes) return false;
  if (bytes.length === 4) return bytes[0] === 127;
  if (inPrefix(bytes, [], 127) && bytes[15] === 1) return true;
  return inPrefix(bytes, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], 96) && bytes[12] === 127;
}

/**
 * Whom a client address stands for when counting what it does: an IPv4 address itself (also when the socket gives it
 * mapped into IPv6), an IPv6 address by its first `ipv6PrefixBits` bits, since one subscriber is usually given a
 * whole /64 and would otherwise have a fresh allowance at every address in it. Text that is no address stands alone.
 */
export function addressGroup(ip: string, ipv6PrefixBits: number): string {
  if (!ipaddr.isValid(ip)) return ip;
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toString();
  const bytes = address.toByteArray().map((byte, i) => byte & (0xff << Math.max(0, Math.min(8, (i + 1) * 8 - ipv6PrefixBits))) & 0xff);
  return `${ipaddr.fromByteArray(bytes).toString()}/${ipv6PrefixBits}`;
}
