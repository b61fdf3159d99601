// The client's address behind reverse proxies the operator trusts (`wmark serve --trust-proxy`), read from
// X-Forwarded-For. Pure parsing, no DNS.
//
// Every proxy appends the address it received the request from, so the header reads "what the client claimed, …,
// what each proxy saw". Only the entries added by trusted proxies can be believed: the header is read from the right,
// the socket's peer first, skipping each address that is a trusted proxy, and the first one that is not is the client.
// A client can write anything to the left of that and it is never read. This is nginx's `set_real_ip_from` with
// `real_ip_recursive on`, and Express's `trust proxy` with a list of addresses. The left-most entry would be the
// client's own claim, and a hop count breaks silently when a hop is added or removed, so neither is used. Without a
// trusted peer the header is ignored entirely: anyone may send one.
import { inPrefix, ipBytes } from './ip-address.js';

/** A parsed `--trust-proxy` list: the addresses and CIDR ranges whose X-Forwarded-For entries are believed. */
export interface TrustedProxies {
  readonly ranges: readonly { readonly bytes: readonly number[]; readonly bits: number }[];
}

/**
 * Parses a comma-separated list of IP addresses and CIDR ranges ("127.0.0.1, 10.0.0.0/8, ::1, fd00::/8"); undefined
 * when it names none or any entry is neither.
 */
export function parseTrustedProxies(text: string): TrustedProxies | undefined {
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (entries.length === 0) return undefined;
  const ranges: { bytes: number[]; bits: number }[] = [];
  for (const entry of entries) {
    const m = /^([^/]+?)(?:\/(\d{1,3}))?$/.exec(entry);
    const bytes = m ? addressBytes(m[1]!) : undefined;
    if (!m || !bytes) return undefined;
    const bits = m[2] === undefined ? bytes.length * 8 : Number(m[2]);
    if (bits > bytes.length * 8) return undefined;
    ranges.push({ bytes, bits });
  }
  return { ranges };
}

/** True when `address` (an IP literal) is one of the trusted proxies. */
export function isTrustedProxy(proxies: TrustedProxies, address: string): boolean {
  const bytes = addressBytes(address);
  return bytes !== undefined && proxies.ranges.some((r) => r.bytes.length === bytes.length && inPrefix(bytes, r.bytes, r.bits));
}

/**
 * One X-Forwarded-For entry as an address in its canonical text: "203.0.113.7", "203.0.113.7:51234",
 * "2001:db8::1", "[2001:db8::1]" and "[2001:db8::1]:443" are read; an IPv4 address mapped into IPv6 reads as IPv4.
 * Undefined for anything else: a host name, "unknown", an IPv6 zone, garbage.
 */
export function forwardedAddress(entry: string): string | undefined {
  const text = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(text);
  const withPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(text);
  const literal = bracketed?.[1] ?? withPort?.[1] ?? text;
  if (literal.includes('%')) return undefined;
  const bytes = addressBytes(literal);
  return bytes && formatAddress(bytes);
}

/**
 * The address a request came from: the socket's peer, or, when the peer is a trusted proxy, the right-most
 * X-Forwarded-For entry that is not one (the left-most when every entry is trusted). An entry that is not an address
 * stops the walk at the proxy that passed it on, which is then the client: it is the last address known to be true.
 * Undefined without a peer (a request made in-process).
 */
export function clientAddress(peer: string | undefined, forwardedFor: string | undefined, proxies: TrustedProxies | undefined): string | undefined {
  if (peer === undefined) return undefined;
  let client = forwardedAddress(peer) ?? peer;
  if (!proxies || !isTrustedProxy(proxies, client) || !forwardedFor) return client;
  const entries = forwardedFor.split(',');
  for (let i = entries.length - 1; i >= 0; i--) {
    // Empty list elements (", ,") are allowed by HTTP's list syntax and say nothing.
    if (entries[i]!.trim() === '') continue;
    const address = forwardedAddress(entries[i]!);
    if (address === undefined) return client;
    client = address;
    if (!isTrustedProxy(proxies, client)) return client;
  }
  return client;
}

/** An address's bytes with an IPv4 address mapped into IPv6 (::ffff:a.b.c.d, as a dual-stack socket names it) as IPv4. */
function addressBytes(text: string): number[] | undefined {
  const bytes = ipBytes(text);
  if (bytes?.length === 16 && inPrefix(bytes, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], 96)) return bytes.slice(12);
  return bytes;
}

function formatAddress(bytes: readonly number[]): string {
  if (bytes.length === 4) return bytes.join('.');
  const groups = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  // The URL parser writes IPv6 in its one canonical form (RFC 5952: lower case, the longest zero run as ::).
  return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
}
