// Unit tests for reading the client's address behind trusted proxies: the --trust-proxy list, one X-Forwarded-For
// entry in its spellings, and the walk from the right that a client cannot steer by writing its own entries.
import { describe, expect, it } from 'vitest';
import { clientAddress, forwardedAddress, isTrustedProxy, parseTrustedProxies } from '../../../src/core/forwarded-for.js';

const trust = (text: string) => {
  const proxies = parseTrustedProxies(text);
  if (!proxies) throw new Error(`not a proxy list: ${text}`);
  return proxies;
};

describe('parseTrustedProxies', () => {
  it('reads addresses and CIDR ranges, IPv4 and IPv6, with spaces and empty entries', () => {
    const p = trust(' 127.0.0.1, 10.0.0.0/8,,::1 , fd00::/8, 192.168.1.0/24 ');
    expect(p.ranges).toHaveLength(5);
    for (const a of ['127.0.0.1', '10.255.0.3', '::1', 'fd12:3456::1', '192.168.1.77', '::ffff:10.1.2.3']) expect(isTrustedProxy(p, a), a).toBe(true);
    for (const a of ['127.0.0.2', '11.0.0.1', '::2', 'fe80::1', '192.168.2.1', 'not an address']) expect(isTrustedProxy(p, a), a).toBe(false);
  });

  it('a /0 trusts every address of its family only', () => {
    const p = trust('0.0.0.0/0');
    expect(isTrustedProxy(p, '203.0.113.9')).toBe(true);
    expect(isTrustedProxy(p, '2001:db8::1')).toBe(false);
  });

  it('refuses names, prefixes too long for the family, and an empty list', () => {
    for (const bad of ['', ' , ', 'localhost', '10.0.0.0/33', '::1/129', '10.0.0.0/', '10.0.0/8', '1.2.3.4.5', '10.0.0.0/8/8', 'loopback', '[::1]/128x'])
      expect(parseTrustedProxies(bad), bad).toBeUndefined();
  });
});

describe('forwardedAddress', () => {
  it('reads the spellings proxies write, ports and brackets stripped, in canonical form', () => {
    expect(forwardedAddress('203.0.113.7')).toBe('203.0.113.7');
    expect(forwardedAddress(' 203.0.113.7:51234 ')).toBe('203.0.113.7');
    expect(forwardedAddress('2001:DB8:0:0:0:0:0:1')).toBe('2001:db8::1');
    expect(forwardedAddress('[2001:db8::1]')).toBe('2001:db8::1');
    expect(forwardedAddress('[2001:db8::1]:443')).toBe('2001:db8::1');
    expect(forwardedAddress('::ffff:198.51.100.4')).toBe('198.51.100.4');
    expect(forwardedAddress('[::ffff:c633:6404]:80')).toBe('198.51.100.4');
    expect(forwardedAddress('::1')).toBe('::1');
  });

  it('refuses what is not an address', () => {
    for (const bad of [
      '',
      'unknown',
      '_hidden',
      'example.com',
      'example.com:80',
      '2001:db8::1:443x',
      'fe80::1%eth0',
      '[fe80::1%25eth0]',
      '256.1.1.1',
      '1.2.3',
      '[1.2.3.4]x',
      '1.2.3.4:',
      '1.2.3.4:123456',
      '<script>',
    ])
      expect(forwardedAddress(bad), bad).toBeUndefined();
  });
});

describe('clientAddress', () => {
  const proxies = trust('127.0.0.1, 10.0.0.0/8, ::1');

  it('without trusted proxies the header is ignored: the peer is the client, whatever it claims', () => {
    expect(clientAddress('203.0.113.7', '198.51.100.1', undefined)).toBe('203.0.113.7');
    expect(clientAddress('::ffff:203.0.113.7', '198.51.100.1', undefined)).toBe('203.0.113.7');
  });

  it('a peer that is not a trusted proxy is the client, even with trusted proxies named', () => {
    expect(clientAddress('203.0.113.7', '198.51.100.1, 10.0.0.5', proxies)).toBe('203.0.113.7');
  });

  it('behind one trusted proxy: the entry it appended', () => {
    expect(clientAddress('127.0.0.1', '198.51.100.1', proxies)).toBe('198.51.100.1');
    expect(clientAddress('::ffff:127.0.0.1', '198.51.100.1', proxies)).toBe('198.51.100.1');
    expect(clientAddress('::1', '2001:db8::7', proxies)).toBe('2001:db8::7');
  });

  it("a client's own entries to the left never count: the right-most untrusted one does", () => {
    expect(clientAddress('127.0.0.1', '1.1.1.1, 2.2.2.2, 198.51.100.1', proxies)).toBe('198.51.100.1');
    // A forged entry naming a trusted proxy only moves the walk past itself if it is right of the client's real one.
    expect(clientAddress('127.0.0.1', '10.0.0.9, 198.51.100.1', proxies)).toBe('198.51.100.1');
  });

  it('through many trusted hops, the first untrusted address from the right', () => {
    expect(clientAddress('127.0.0.1', '9.9.9.9, 198.51.100.1, 10.0.0.3, 10.1.0.4, 10.2.0.5', proxies)).toBe('198.51.100.1');
    const long = [...Array.from({ length: 500 }, (_, i) => `10.0.${i >> 8}.${i & 255}`)];
    expect(clientAddress('127.0.0.1', ['203.0.113.50', ...long].join(', '), proxies)).toBe('203.0.113.50');
  });

  it('when every entry is a trusted proxy, the left-most; with no header, the peer', () => {
    expect(clientAddress('127.0.0.1', '10.0.0.1, 10.0.0.2', proxies)).toBe('10.0.0.1');
    expect(clientAddress('127.0.0.1', undefined, proxies)).toBe('127.0.0.1');
    expect(clientAddress('127.0.0.1', '', proxies)).toBe('127.0.0.1');
    expect(clientAddress('127.0.0.1', ' , ,', proxies)).toBe('127.0.0.1');
  });

  it('reads ports, brackets and IPv6 in the entries', () => {
    expect(clientAddress('127.0.0.1', '198.51.100.1:40000', proxies)).toBe('198.51.100.1');
    expect(clientAddress('127.0.0.1', '[2001:db8::5]:40000, 10.0.0.3:8080', proxies)).toBe('2001:db8::5');
  });

  it('a malformed entry stops the walk at the trusted proxy that passed it on', () => {
    expect(clientAddress('127.0.0.1', '198.51.100.1, garbage', proxies)).toBe('127.0.0.1');
    expect(clientAddress('127.0.0.1', '198.51.100.1, unknown, 10.0.0.3', proxies)).toBe('10.0.0.3');
    expect(clientAddress('127.0.0.1', 'garbage, 198.51.100.1', proxies)).toBe('198.51.100.1');
  });

  it('no peer (a request made in-process) has no address', () => {
    expect(clientAddress(undefined, '198.51.100.1', proxies)).toBeUndefined();
  });
});
