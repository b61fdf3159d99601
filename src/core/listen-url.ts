// The base of the links a server hands out when no public URL is configured: the address it listens on, where a
// server bound to every interface (0.0.0.0, ::) is named by loopback, the one address sure to reach it from this
// machine. Links never take their host from a request (its Host header is the client's to write).

/** True for an address that binds every interface: 0.0.0.0 and :: (in any spelling), which no client can connect to. */
export function isWildcardHost(host: string): boolean {
  return /^(0\.0\.0\.0|\[?(0{0,4}:){2,7}0{0,4}\]?)$/.test(host);
}

/** `http://HOST:PORT`, an IPv6 address in brackets, a wildcard named by loopback (IPv4's, or IPv6's for `::`). */
export function localUrl(host: string, port: number): string {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  const named = isWildcardHost(bare) ? (bare.includes(':') ? '::1' : '127.0.0.1') : bare;
  return `http://${named.includes(':') ? `[${named}]` : named}:${port}`;
}
