// Unit tests for the SSRF address filter: public unicast passes; loopback, private, link-local and friends do not,
// in every spelling (IPv4, IPv6, IPv4 inside IPv6).
import { describe, expect, it } from 'vitest';
import { ipBytes, isLoopbackAddress, isPublicAddress } from '../../../src/core/ip-address.js';

describe('isPublicAddress', () => {
  it('lets public unicast addresses through', () => {
    for (const ip of [
      '8.8.8.8',
      '1.1.1.1',
      '93.184.216.34',
      '2606:4700:4700::1111',
      '2a00:1450:4001:80b::200e',
      '::ffff:8.8.8.8',
      '64:ff9b::808:808',
      '[2606:4700::1]',
    ]) {
      expect(isPublicAddress(ip), ip).toBe(true);
    }
  });

  it('refuses loopback, private, link-local, CGNAT, multicast, reserved and unspecified ranges', () => {
    const refused = [
      '127.0.0.1',
      '127.255.255.254',
      '0.0.0.0',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '224.0.0.1',
      '255.255.255.255',
      '198.18.0.1',
      '::1',
      '::',
      'fe80::1',
      'fe80::1%eth0',
      'fc00::1',
      'fd12:3456::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:10.0.0.1',
      '::127.0.0.1',
      '64:ff9b::7f00:1',
      '2002:7f00:1::',
      '2002:c0a8:101::1',
      '[::1]',
      'localhost',
      'example.com',
      '',
      '1.2.3',
      '01.2.3.4',
      '1.2.3.256',
      ':::1',
      '1::2::3',
    ];
    for (const ip of refused) expect(isPublicAddress(ip), ip).toBe(false);
  });

  it('parses the IPv6 spellings to the same bytes', () => {
    expect(ipBytes('::ffff:127.0.0.1')).toEqual(ipBytes('::ffff:7f00:1'));
    expect(ipBytes('0:0:0:0:0:0:0:1')).toEqual(ipBytes('::1'));
    expect(ipBytes('::')).toEqual(Array(16).fill(0));
    expect(ipBytes('1.2.3.4')).toEqual([1, 2, 3, 4]);
  });
});

describe('an IPv6 address that carries an IPv4 one is judged by the IPv4 address it carries', () => {
  // Each form: addresses that carry loopback, private or link-local IPv4 (refused), and one that carries 8.8.8.8.
  const FORMS: Record<string, { refused: string[]; allowed: string[] }> = {
    'IPv4-mapped ::ffff:0:0/96': { refused: ['::ffff:7f00:1', '::ffff:a9fe:a9fe', '::ffff:192.168.1.1'], allowed: ['::ffff:808:808'] },
    'IPv4-translated ::ffff:0:0:0/96': { refused: ['::ffff:0:7f00:1', '::ffff:0:a00:1', '::ffff:0:127.0.0.1'], allowed: ['::ffff:0:808:808'] },
    'NAT64 64:ff9b::/96': { refused: ['64:ff9b::7f00:1', '64:ff9b::192.168.1.1', '64:ff9b::a9fe:a9fe'], allowed: ['64:ff9b::808:808'] },
    'local-use NAT64 64:ff9b:1::/48': {
      // Read as a /96 prefix, as a /48 one (10.0.0.1 in bytes 6, 7, 9, 10) and as a /64 one (127.0.0.1 in bytes 9-12).
      refused: ['64:ff9b:1::7f00:1', '64:ff9b:1::10.0.0.1', '64:ff9b:1:a00:0:100::', '64:ff9b:1:0:7f:0:100:0'],
      allowed: ['64:ff9b:1::808:808', '64:ff9b:1:abcd:ef00:100:808:808'],
    },
    '6to4 2002::/16': { refused: ['2002:7f00:1::', '2002:a9fe:a9fe::1', '2002:c0a8:101:1::5'], allowed: ['2002:808:808::1'] },
    'Teredo 2001::/32 (server 8.8.4.4; client XOR 0xffffffff)': {
      // Client 127.0.0.1 and 10.0.0.1 inverted; then a private server with a public client.
      refused: ['2001:0:808:404::80ff:fffe', '2001:0:808:404::f5ff:fffe', '2001:0:a00:1::f7f7:f7f7'],
      allowed: ['2001:0:808:404::f7f7:f7f7'],
    },
    'IPv4-compatible ::/96': { refused: ['::7f00:1', '::a00:1', '::127.0.0.1', '::', '::1'], allowed: ['::808:808'] },
  };
  for (const [form, { refused, allowed }] of Object.entries(FORMS)) {
    it(form, () => {
      for (const ip of refused) expect(isPublicAddress(ip), ip).toBe(false);
      for (const ip of allowed) expect(isPublicAddress(ip), ip).toBe(true);
      for (const ip of [...refused, ...allowed]) expect(isPublicAddress(`[${ip}]`), `[${ip}]`).toBe(isPublicAddress(ip));
    });
  }
});

describe('isLoopbackAddress', () => {
  it('is true for a peer on this machine, in each spelling a socket reports', () => {
    for (const ip of ['127.0.0.1', '127.8.9.10', '::1', '0:0:0:0:0:0:0:1', '[::1]', '::ffff:127.0.0.1', '::ffff:7f00:1'])
      expect(isLoopbackAddress(ip), ip).toBe(true);
  });

  it('is false for every other address, and for what is no address', () => {
    for (const ip of [
      '10.0.0.1',
      '192.168.1.2',
      '8.8.8.8',
      '::',
      '::2',
      '::2.0.0.1',
      'fe80::1',
      '::ffff:10.0.0.1',
      '::ffff:8.8.8.8',
      '128.0.0.1',
      'localhost',
      '',
    ])
      expect(isLoopbackAddress(ip), ip).toBe(false);
  });
});
