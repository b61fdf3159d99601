// Unit tests for the base of links without a public URL: where the server listens, a wildcard bind named by loopback.
import { describe, expect, it } from 'vitest';
import { isWildcardHost, localUrl } from '../../../src/core/listen-url.js';

describe('localUrl', () => {
  it('names the address the server listens on', () => {
    expect(localUrl('127.0.0.1', 8080)).toBe('http://127.0.0.1:8080');
    expect(localUrl('localhost', 8080)).toBe('http://localhost:8080');
    expect(localUrl('192.168.1.5', 80)).toBe('http://192.168.1.5:80');
    expect(localUrl('::1', 8080)).toBe('http://[::1]:8080');
    expect(localUrl('[2001:db8::5]', 8080)).toBe('http://[2001:db8::5]:8080');
  });

  it('names a server bound to every interface by loopback', () => {
    expect(localUrl('0.0.0.0', 8080)).toBe('http://127.0.0.1:8080');
    expect(localUrl('::', 8080)).toBe('http://[::1]:8080');
    expect(localUrl('[::]', 9000)).toBe('http://[::1]:9000');
    expect(localUrl('0:0:0:0:0:0:0:0', 9000)).toBe('http://[::1]:9000');
  });
});

describe('isWildcardHost', () => {
  it('is true for 0.0.0.0 and :: only', () => {
    for (const h of ['0.0.0.0', '::', '[::]', '0:0:0:0:0:0:0:0', '::0']) expect(isWildcardHost(h), h).toBe(true);
    for (const h of ['127.0.0.1', '::1', 'localhost', '0.0.0.1', '10.0.0.0', 'example.com', '']) expect(isWildcardHost(h), h).toBe(false);
  });
});
