// Which IP addresses wmark may be made to fetch from (against SSRF): public unicast only, one policy for sources,
// images and whatever else it fetches. Loopback, private, link-local, CGNAT, multicast, reserved and unspecified
// ranges are refused in IPv4 and IPv6, and an IPv6 address that carries an IPv4 one (mapped, translated, NAT64, 6to4,
// Teredo, IPv4-compatible) is judged by the IPv4 address it carries, since a gateway on the way delivers it there.
// Parsing and the ranges are ipaddr.js's (what proxy-addr and Express use). Pure, no DNS.
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** An IPv4 (four decimal parts only: `01.2.3.4` and `127.1` are not addresses here) or IPv6 literal, brackets allowed. */
function parseAddress(ip: string): Address | undefined {
  const text = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  if (text.includes(':') && ipaddr.IPv6.isValid(text)) return ipaddr.IPv6.parse(text);
  return undefined;
}

/** The address's bytes (4 or 16), or undefined when `ip` is not an IPv4 or IPv6 literal (brackets allowed). */
export function ipBytes(ip: string): number[] | undefined {
  return parseAddress(ip)?.toByteArray();
}

/** True when the first `bits` bits of `bytes` are those of `prefix` (missing prefix bytes count as zero). */
export function inPrefix(bytes: readonly number[], prefix: readonly number[], bits: number): boolean {
  for (let i = 0; i < bits; i++) {
    const mask = 0x80 >> (i % 8);
    if ((bytes[i >> 3]! & mask) !== ((prefix[i >> 3] ?? 0) & mask)) return false;
  }
  return true;
}

/** Where a reading of an IPv6 address finds IPv4 bytes, and the bytes that must be zero for the reading to apply. */
interface Reading {
  at: readonly number[];
  zero?: readonly number[];
  /** Teredo stores the client's address inverted. */
  invert?: boolean;
}

/** An IPv6 prefix that carries IPv4 addresses, and each way of reading one out of an address in it. */
interface Embedding {
  prefix: ipaddr.IPv6;
  bits: number;
  readings: readonly Reading[];
}

const LAST_32: Reading = { at: [12, 13, 14, 15] };
const embedding = (prefix: string, bits: number, readings: readonly Reading[]): Embedding => ({ prefix: ipaddr.IPv6.parse(prefix), bits, readings });

const EMBEDDINGS: readonly Embedding[] = [
  embedding('::ffff:0:0', 96, [LAST_32]), // IPv4-mapped
  embedding('::ffff:0:0:0', 96, [LAST_32]), // IPv4-translated (SIIT)
  embedding('64:ff9b::', 96, [LAST_32]), // NAT64, well-known prefix
  // NAT64, local-use: the operator picks a prefix length from /48 to /96, and each puts the IPv4 bytes elsewhere
  // (skipping byte 8, with zeros after them); every reading that fits is judged, so no prefix length slips through.
  embedding('64:ff9b:1::', 48, [
    { at: [6, 7, 9, 10], zero: [8, 11, 12, 13, 14, 15] },
    { at: [7, 9, 10, 11], zero: [8, 12, 13, 14, 15] },
    { at: [9, 10, 11, 12], zero: [8, 13, 14, 15] },
    LAST_32,
  ]),
  embedding('2002::', 16, [{ at: [2, 3, 4, 5] }]), // 6to4
  embedding('2001::', 32, [{ at: [4, 5, 6, 7] }, { ...LAST_32, invert: true }]), // Teredo: its server and its client
  embedding('::', 96, [LAST_32]), // IPv4-compatible (deprecated); also :: and ::1
];

/** The IPv4 addresses an IPv6 address carries, by every reading that applies; none when it carries none. */
function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4[] {
  const found = EMBEDDINGS.find((e) => address.match(e.prefix, e.bits));
  if (!found) return [];
  const bytes = address.toByteArray();
  return found.readings
    .filter((r) => (r.zero ?? []).every((b) => bytes[b] === 0))
    .map((r) => new ipaddr.IPv4(r.at.map((b) => (r.invert ? bytes[b]! ^ 0xff : bytes[b]!))));
}

/** True only for a public unicast address; anything unparsable is not public. */
export function isPublicAddress(ip: string): boolean {
  const address = parseAddress(ip);
  if (!address) return false;
  if (address.kind() === 'ipv4') return address.range() === 'unicast';
  const carried = embeddedIpv4(address as ipaddr.IPv6);
  if (carried.length > 0) return carried.every((v4) => v4.range() === 'unicast');
  return address.range() === 'unicast';
}

/** True for 127.0.0.0/8, ::1 and an IPv4 loopback address mapped into IPv6 (::ffff:127.x.y.z): a peer on this machine. */
export function isLoopbackAddress(ip: string): boolean {
  const address = parseAddress(ip);
  if (!address) return false;
  const plain = address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() ? (address as ipaddr.IPv6).toIPv4Address() : address;
  return plain.range() === 'loopback';
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
