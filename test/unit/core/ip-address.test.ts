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
