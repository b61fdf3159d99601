// Config resolution against real temp folders: precedence, search, file formats, errors and sources.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mediaFlags } from '../../../src/cli/media-flags.js';
import { ConfigError } from '../../../src/config/config-error.js';
import { type ConfigFlags, type LoadConfigOptions, loadConfig } from '../../../src/config/load-config.js';
import { configDir } from '../../../src/config/paths.js';

let root: string;
let platform: { data: string; config: string };

beforeEach(() => {
  // realpath: on macOS os.tmpdir() is a symlink and cosmiconfig reports resolved paths.
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wmark-config-')));
  platform = { data: path.join(root, 'platform-data'), config: path.join(root, 'platform-config') };
});

afterEach(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

function write(relative: string, content: string | object): string {
  const file = path.join(root, relative);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function dir(relative: string): string {
  const d = path.join(root, relative);
  fs.mkdirSync(d, { recursive: true });
  return d;
}

// Every call is isolated: search stops at the temp root, and the user config folder is inside it.
function load(overrides: Partial<LoadConfigOptions> & { flags?: ConfigFlags } = {}) {
  return loadConfig({
    cwd: root,
    flags: {},
    availableParallelism: 6,
    platformDirs: platform,
    stopDir: root,
    ...overrides,
    env: { WMARK_CONFIG_DIR: path.join(root, 'user-config'), ...overrides.env },
  });
}

async function loadError(overrides: Parameters<typeof load>[0] = {}): Promise<ConfigError> {
  try {
    await load(overrides);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected loadConfig to throw');
}

describe('loadConfig defaults', () => {
  it('fills built-in defaults when nothing is set', async () => {
    const config = await load();
    expect(config).toEqual({
      dataDir: platform.data,
      workers: 6,
      encode: { preset: 'veryfast', crf: 23 },
      server: { host: '127.0.0.1', port: 8080, tokenTtlSeconds: 3600, metricsPublic: false, drainSeconds: 0, authIpv6Prefix: 64 },
      remote: {},
      shutdownTimeoutSeconds: 10,
      sources: {},
    });
    expect(config.configFile).toBeUndefined();
    expect(config.remote.api).toBeUndefined();
  });

  it('takes the shutdown timeout from WMARK_SHUTDOWN_TIMEOUT, and a flag over it', async () => {
    expect((await load({ env: { WMARK_SHUTDOWN_TIMEOUT: '3' } })).shutdownTimeoutSeconds).toBe(3);
    expect((await load({ env: { WMARK_SHUTDOWN_TIMEOUT: '3' }, flags: { shutdownTimeout: '0' } })).shutdownTimeoutSeconds).toBe(0);
  });

  it('opens /metrics to other machines from WMARK_METRICS_PUBLIC or --metrics-public, and refuses a value that is no yes or no', async () => {
    expect((await load({ env: { WMARK_METRICS_PUBLIC: '1' } })).server.metricsPublic).toBe(true);
    expect((await load({ env: { WMARK_METRICS_PUBLIC: 'true' }, flags: { metricsPublic: false } })).server.metricsPublic).toBe(false);
    expect((await load({ flags: { metricsPublic: true } })).server).toMatchObject({ metricsPublic: true });
    const error = await loadError({ env: { WMARK_METRICS_PUBLIC: 'maybe' } });
    expect(error.message).toBe('env WMARK_METRICS_PUBLIC: expected true or false, got the string "maybe"');
  });

  it('caps the default worker count at 64', async () => {
    expect((await load({ availableParallelism: 128 })).workers).toBe(64);
  });
});

describe('precedence: defaults < file < env < flags', () => {
  beforeEach(() => {
    write('.wmarkrc.json', {
      workers: 2,
      encode: { preset: 'slow', crf: 20 },
      publicUrl: 'https://file.example',
      server: { port: 9000 },
      remote: { url: 'https://file-remote.example', api: '1.0' },
    });
  });

  it('file beats defaults, leaving unset nested fields at their default', async () => {
    const config = await load();
    expect(config.workers).toBe(2);
    expect(config.encode).toEqual({ preset: 'slow', crf: 20 });
    expect(config.server).toEqual({ host: '127.0.0.1', port: 9000, tokenTtlSeconds: 3600, metricsPublic: false, drainSeconds: 0, authIpv6Prefix: 64 });
    expect(config.remote).toEqual({ url: 'https://file-remote.example', api: '1.0' });
  });

  it('env beats file', async () => {
    const config = await load({
      env: { WMARK_WORKERS: '3', WMARK_CRF: '30', WMARK_PUBLIC_URL: 'http://env.example', WMARK_API_VERSION: '2.0' },
    });
    expect(config.workers).toBe(3);
    expect(config.encode).toEqual({ preset: 'slow', crf: 30 });
    expect(config.publicUrl).toBe('http://env.example');
    expect(config.remote).toEqual({ url: 'https://file-remote.example', api: '2.0' });
  });

  it('flags beat env and file', async () => {
    const config = await load({
      env: { WMARK_WORKERS: '3', WMARK_CRF: '30', WMARK_PRESET: 'fast', WMARK_API_URL: 'http://env-remote.example' },
      flags: { workers: '4', crf: 18, port: '7000', remote: 'http://flag-remote.example', color: false },
    });
    expect(config.workers).toBe(4);
    expect(config.encode).toEqual({ preset: 'fast', crf: 18 });
    expect(config.server.port).toBe(7000);
    expect(config.remote.url).toBe('http://flag-remote.example');
    expect(config.color).toBe(false);
  });

  it('records where each non-default value came from', async () => {
    const file = path.join(root, '.wmarkrc.json');
    const config = await load({
      env: { WMARK_WORKERS: '3', WMARK_PRESET: 'fast' },
      flags: { crf: 18, color: false },
    });
    expect(config.configFile).toBe(file);
    expect(config.sources).toEqual({
      workers: 'env WMARK_WORKERS',
      'encode.preset': 'env WMARK_PRESET',
      'encode.crf': 'flag --crf',
      publicUrl: file,
      'server.port': file,
      'remote.url': file,
      'remote.api': file,
      color: 'flag --no-color',
    });
  });

  it('treats an empty env var as unset', async () => {
    const config = await load({ env: { WMARK_WORKERS: '', WMARK_HOME: '' } });
    expect(config.workers).toBe(2);
    expect(config.dataDir).toBe(platform.data);
  });
});

describe('finding the config file', () => {
  it('walks up from a nested cwd to a .wmarkrc.json two levels up', async () => {
    const file = write('project/.wmarkrc.json', { workers: 5 });
    const config = await load({ cwd: dir('project/a/b') });
    expect(config.workers).toBe(5);
    expect(config.configFile).toBe(file);
  });

  it('prefers the nearest file', async () => {
    write('project/.wmarkrc.json', { workers: 5 });
    const near = write('project/a/.wmarkrc.yaml', 'workers: 7\n');
    const config = await load({ cwd: dir('project/a/b') });
    expect(config.workers).toBe(7);
    expect(config.configFile).toBe(near);
  });

  it('loads wmark.config.mjs', async () => {
    const file = write('wmark.config.mjs', "export default { workers: 9, encode: { preset: 'medium' } };\n");
    const config = await load();
    expect(config.workers).toBe(9);
    expect(config.encode.preset).toBe('medium');
    expect(config.configFile).toBe(file);
  });

  it('loads an ESM wmark.config.js and a CommonJS .wmarkrc.cjs', async () => {
    write('a/wmark.config.js', 'export default { workers: 14 };\n');
    write('b/.wmarkrc.cjs', 'module.exports = { workers: 15 };\n');
    expect((await load({ cwd: path.join(root, 'a') })).workers).toBe(14);
    expect((await load({ cwd: path.join(root, 'b') })).workers).toBe(15);
  });

  it('reads the "wmark" property of package.json', async () => {
    write('package.json', { name: 'x', wmark: { workers: 11 } });
    expect((await load()).workers).toBe(11);
  });

  it('reads an extensionless .wmarkrc as YAML', async () => {
    write('.wmarkrc', 'encode:\n  crf: 28\n');
    expect((await load()).encode.crf).toBe(28);
  });

  it('falls back to config.json in the user config folder', async () => {
    const file = write('user-config/config.json', { workers: 12 });
    const config = await load({ cwd: dir('elsewhere') });
    expect(config.workers).toBe(12);
    expect(config.configFile).toBe(file);
  });

  it('uses an explicit --config file instead of searching', async () => {
    write('.wmarkrc.json', { workers: 5 });
    const explicit = write('conf/custom.yml', 'workers: 13\n');
    const config = await load({ explicitFile: 'conf/custom.yml' });
    expect(config.workers).toBe(13);
    expect(config.configFile).toBe(explicit);
    expect(config.sources.workers).toBe(explicit);
  });

  it('fails on a missing explicit file, naming it', async () => {
    const error = await loadError({ explicitFile: 'nope.json' });
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain(path.join(root, 'nope.json'));
    expect(error.message).toMatch(/not found/);
    expect(error.file).toBe(path.join(root, 'nope.json'));
    expect(error.hint).toMatch(/--config/);
  });
});

describe('config errors', () => {
  it('names the file and the field path of a bad value', async () => {
    const file = write('.wmarkrc.json', { workers: 'lots' });
    const error = await loadError();
    expect(error.message).toBe(`${file}: workers: expected an integer from 1 to 64, got the string "lots"`);
    expect(error.file).toBe(file);
  });

  it('names every bad nested field', async () => {
    const file = write('.wmarkrc.json', {
      encode: { crf: 99, preset: 'turbo' },
      server: { port: -1 },
      remote: { url: 'ftp://x', api: '3.0' },
      publicUrl: 'not a url',
    });
    const error = await loadError();
    const lines = error.message.split('\n');
    expect(lines).toContain(`${file}: encode.crf: expected an integer from 0 to 51, got 99`);
    expect(lines.some((l) => l.startsWith(`${file}: encode.preset: expected one of ultrafast,`))).toBe(true);
    expect(lines).toContain(`${file}: server.port: expected an integer from 0 to 65535, got -1`);
    expect(lines).toContain(`${file}: remote.url: expected an http(s) URL, got the string "ftp://x"`);
    expect(lines).toContain(`${file}: remote.api: expected one of 1.0, 2.0, got the string "3.0"`);
    expect(lines).toContain(`${file}: publicUrl: expected an http(s) URL, got the string "not a url"`);
  });

  it('rejects unknown keys, naming them and listing the known ones', async () => {
    const file = write('.wmarkrc.json', { wrokers: 2, encode: { quality: 1 } });
    const error = await loadError();
    const lines = error.message.split('\n');
    expect(lines).toHaveLength(2);
    expect(lines).toContain(`${file}: wrokers: unknown key`);
    expect(lines).toContain(`${file}: encode.quality: unknown key`);
    expect(error.hint).toMatch(/Known keys: dataDir, .*workers/);
    expect(error.hint).toContain('Known keys in "encode": preset, crf.');
  });

  it('names the file on a JSON syntax error', async () => {
    const file = write('.wmarkrc.json', '{ "workers": 2,, }');
    const error = await loadError();
    expect(error.message).toMatch(new RegExp(`^${escapeRegExp(file)}: invalid JSON: \\S`));
    // One line: the reason, without parse-json's echo of the input and code frames.
    expect(error.message).not.toContain('\n');
    expect(error.file).toBe(file);
  });

  it('names the file on a YAML syntax error', async () => {
    const file = write('.wmarkrc.yml', 'workers: [1, 2\n');
    const error = await loadError();
    expect(error.message.startsWith(`${file}: invalid YAML`)).toBe(true);
  });

  it('rejects a config that is not an object', async () => {
    const file = write('.wmarkrc.json', '[1, 2]');
    const error = await loadError();
    expect(error.message).toBe(`${file}: expected an object, got an array`);
  });

  it('names the env var that holds a bad value', async () => {
    const error = await loadError({ env: { WMARK_WORKERS: 'abc' } });
    expect(error.message).toBe('env WMARK_WORKERS: expected an integer from 1 to 64, got the string "abc"');
    expect(error.hint).toContain('WMARK_WORKERS');
    expect(error.file).toBeUndefined();
  });

  it('names the env var for bad enums and URLs too', async () => {
    const error = await loadError({ env: { WMARK_PRESET: 'turbo', WMARK_API_URL: 'nope' } });
    expect(error.message).toContain('env WMARK_PRESET: expected one of');
    expect(error.message).toContain('env WMARK_API_URL: expected an http(s) URL, got the string "nope"');
  });

  it('names the flag that holds a bad value, worded as the CLI words every flag error, and says which flag it is', async () => {
    const error = await loadError({ flags: { port: '99999' } });
    expect(error.message).toBe('--port: expected an integer from 0 to 65535, got 99999');
    expect(error).toMatchObject({ fromFlag: true, flag: '--port' });
    const text = await loadError({ flags: { port: 'abc' } });
    expect(text.message).toBe('--port: expected an integer from 0 to 65535, got "abc"');
  });
});

describe('relative paths', () => {
  it('resolve against the config file folder', async () => {
    write('project/.wmarkrc.json', {
      dataDir: 'data',
      font: '../fonts/a.ttf',
      ffmpeg: './bin/ffmpeg',
      ffprobe: 'ffprobe',
    });
    const config = await load({ cwd: dir('project/a/b') });
    expect(config.dataDir).toBe(path.join(root, 'project/data'));
    expect(config.font).toBe(path.join(root, 'fonts/a.ttf'));
    expect(config.ffmpeg).toBe(path.join(root, 'project/bin/ffmpeg'));
    // A bare command name is a PATH lookup, not a file next to the config.
    expect(config.ffprobe).toBe('ffprobe');
  });

  it('resolve against cwd when from env or flags', async () => {
    const cwd = dir('work');
    const config = await load({
      cwd,
      env: { WMARK_HOME: 'home', WMARK_FONT: 'f.ttf' },
      flags: { ffmpeg: 'tools/ffmpeg' },
    });
    expect(config.dataDir).toBe(path.join(cwd, 'home'));
    expect(config.font).toBe(path.join(cwd, 'f.ttf'));
    expect(config.ffmpeg).toBe(path.join(cwd, 'tools/ffmpeg'));
    expect(config.sources.dataDir).toBe('env WMARK_HOME');
    expect(config.sources.ffmpeg).toBe('flag --ffmpeg');
  });

  it('keep absolute paths as they are', async () => {
    write('.wmarkrc.json', { dataDir: '/srv/wmark' });
    expect((await load()).dataDir).toBe(path.resolve('/srv/wmark'));
  });
});

describe('paths', () => {
  it('takes the config folder from WMARK_CONFIG_DIR, else the platform', () => {
    expect(configDir({ WMARK_CONFIG_DIR: '/c' }, platform)).toBe('/c');
    expect(configDir({}, platform)).toBe(platform.config);
  });
});

describe('queue.url (the render farm)', () => {
  it('is unset by default: serve renders embedded', async () => {
    expect((await load()).queue).toBeUndefined();
  });

  it('comes from the file, then WMARK_QUEUE_URL, then --queue', async () => {
    write('.wmarkrc.json', { queue: { url: 'redis://file:6379' } });
    expect((await load()).queue).toEqual({ url: 'redis://file:6379' });
    const fromEnv = await load({ env: { WMARK_QUEUE_URL: 'redis://env:6379' } });
    expect(fromEnv.queue).toEqual({ url: 'redis://env:6379' });
    expect(fromEnv.sources['queue.url']).toBe('env WMARK_QUEUE_URL');
    const fromFlag = await load({ env: { WMARK_QUEUE_URL: 'redis://env:6379' }, flags: { queue: 'rediss://:pw@flag:6380/2' } });
    expect(fromFlag.queue).toEqual({ url: 'rediss://:pw@flag:6380/2' });
    expect(fromFlag.sources['queue.url']).toBe('flag --queue');
  });

  it('names a URL that is not redis://', async () => {
    const error = await loadError({ env: { WMARK_QUEUE_URL: 'http://redis:6379' } });
    expect(error.message).toContain('env WMARK_QUEUE_URL: expected a redis:// or rediss:// URL');
    const fileError = await (async () => {
      write('.wmarkrc.json', { queue: { address: 'redis://x' } });
      return loadError();
    })();
    expect(fileError.message).toContain('queue.address: unknown key');
    expect(fileError.hint).toContain('Known keys in "queue": url.');
  });
});

describe('server.trustProxy (the reverse proxies whose X-Forwarded-For is believed)', () => {
  it('is unset by default, and comes from the file, then WMARK_TRUST_PROXY, then --trust-proxy', async () => {
    expect((await load()).server.trustProxy).toBeUndefined();
    write('.wmarkrc.json', { server: { trustProxy: '10.0.0.0/8' } });
    expect((await load()).server.trustProxy).toBe('10.0.0.0/8');
    const fromEnv = await load({ env: { WMARK_TRUST_PROXY: '127.0.0.1, ::1' } });
    expect([fromEnv.server.trustProxy, fromEnv.sources['server.trustProxy']]).toEqual(['127.0.0.1, ::1', 'env WMARK_TRUST_PROXY']);
    const fromFlag = await load({ env: { WMARK_TRUST_PROXY: '127.0.0.1' }, flags: { trustProxy: '192.168.0.0/16' } });
    expect([fromFlag.server.trustProxy, fromFlag.sources['server.trustProxy']]).toEqual(['192.168.0.0/16', 'flag --trust-proxy']);
  });

  it('names a list that is not addresses or CIDR ranges, from a flag (a usage error), the environment or the file', async () => {
    const flag = await loadError({ flags: { trustProxy: 'haproxy.internal' } });
    expect(flag.message).toBe(
      '--trust-proxy: expected a comma-separated list of IP addresses or CIDR ranges (e.g. 127.0.0.1,10.0.0.0/8), got "haproxy.internal"',
    );
    expect(flag).toMatchObject({ fromFlag: true, flag: '--trust-proxy' });
    expect((await loadError({ env: { WMARK_TRUST_PROXY: '10.0.0.0/33' } })).message).toContain('env WMARK_TRUST_PROXY: expected a comma-separated list');
    write('.wmarkrc.json', { server: { trustProxy: ['127.0.0.1'] } });
    expect((await loadError()).message).toContain('server.trustProxy: expected a comma-separated list');
  });
});

describe('server.drainSeconds (how long serve drains on SIGTERM before it stops listening)', () => {
  it('is 0 by default (a lone serve stops at once), and comes from the file, then WMARK_DRAIN_SECONDS, then --drain-seconds', async () => {
    expect((await load()).server.drainSeconds).toBe(0);
    write('.wmarkrc.json', { server: { drainSeconds: 5 } });
    expect((await load()).server.drainSeconds).toBe(5);
    const fromEnv = await load({ env: { WMARK_DRAIN_SECONDS: '3' } });
    expect([fromEnv.server.drainSeconds, fromEnv.sources['server.drainSeconds']]).toEqual([3, 'env WMARK_DRAIN_SECONDS']);
    const fromFlag = await load({ env: { WMARK_DRAIN_SECONDS: '3' }, flags: { drainSeconds: '0' } });
    expect([fromFlag.server.drainSeconds, fromFlag.sources['server.drainSeconds']]).toEqual([0, 'flag --drain-seconds']);
  });

  it('names a value that is not a whole number of seconds from 0 to 3600', async () => {
    const flag = await loadError({ flags: { drainSeconds: '2.5' } });
    expect(flag.message).toBe('--drain-seconds: expected an integer from 0 to 3600, got "2.5"');
    expect((await loadError({ env: { WMARK_DRAIN_SECONDS: '-1' } })).message).toContain('env WMARK_DRAIN_SECONDS: expected an integer from 0 to 3600');
  });
});

describe('server.authIpv6Prefix (the IPv6 prefix the failed-credential limit counts a client by)', () => {
  it('is 64 by default, and comes from the file, then WMARK_AUTH_IPV6_PREFIX, then --auth-ipv6-prefix; 32 to 128 bits', async () => {
    expect((await load()).server.authIpv6Prefix).toBe(64);
    write('.wmarkrc.json', { server: { authIpv6Prefix: 56 } });
    expect((await load()).server.authIpv6Prefix).toBe(56);
    const fromEnv = await load({ env: { WMARK_AUTH_IPV6_PREFIX: '48' } });
    expect([fromEnv.server.authIpv6Prefix, fromEnv.sources['server.authIpv6Prefix']]).toEqual([48, 'env WMARK_AUTH_IPV6_PREFIX']);
    const fromFlag = await load({ env: { WMARK_AUTH_IPV6_PREFIX: '48' }, flags: { authIpv6Prefix: '128' } });
    expect([fromFlag.server.authIpv6Prefix, fromFlag.sources['server.authIpv6Prefix']]).toEqual([128, 'flag --auth-ipv6-prefix']);
    expect((await loadError({ flags: { authIpv6Prefix: '16' } })).message).toBe('--auth-ipv6-prefix: expected an integer from 32 to 128, got 16');
  });
});

describe("server.requestCacheSeconds (how long an instance keeps a repeated request's answer)", () => {
  it("is unset by default (the store's 30 s), and comes from the file, then WMARK_REQUEST_CACHE_SECONDS; 0 to 3600", async () => {
    expect((await load()).server.requestCacheSeconds).toBeUndefined();
    write('.wmarkrc.json', { server: { requestCacheSeconds: 5 } });
    expect((await load()).server.requestCacheSeconds).toBe(5);
    const fromEnv = await load({ env: { WMARK_REQUEST_CACHE_SECONDS: '0' } });
    expect([fromEnv.server.requestCacheSeconds, fromEnv.sources['server.requestCacheSeconds']]).toEqual([0, 'env WMARK_REQUEST_CACHE_SECONDS']);
    expect((await loadError({ env: { WMARK_REQUEST_CACHE_SECONDS: '-1' } })).message).toBe(
      'env WMARK_REQUEST_CACHE_SECONDS: expected an integer from 0 to 3600, got -1',
    );
  });
});

describe("media.* (the render farm's shared store)", () => {
  it('is unset by default: media lives in the data folder', async () => {
    expect((await load()).media).toBeUndefined();
  });

  it('comes from the file, then WMARK_MEDIA_URL / WMARK_S3_ENDPOINT / WMARK_S3_REGION, then the flags', async () => {
    write('.wmarkrc.json', { media: { url: 's3://file-bucket/p', s3Endpoint: 'http://minio.file:9000' } });
    expect((await load()).media).toEqual({ url: 's3://file-bucket/p', s3Endpoint: 'http://minio.file:9000' });
    const fromEnv = await load({ env: { WMARK_MEDIA_URL: '/mnt/wmark', WMARK_S3_REGION: 'eu-west-1' } });
    expect(fromEnv.media).toEqual({ url: '/mnt/wmark', s3Endpoint: 'http://minio.file:9000', s3Region: 'eu-west-1' });
    expect(fromEnv.sources['media.url']).toBe('env WMARK_MEDIA_URL');
    const fromFlag = await load({
      env: { WMARK_S3_ENDPOINT: 'http://minio.env:9000' },
      flags: { media: 's3://flag-bucket', s3Endpoint: 'https://r2.example' },
    });
    expect(fromFlag.media).toEqual({ url: 's3://flag-bucket', s3Endpoint: 'https://r2.example' });
    expect(fromFlag.sources['media.s3Endpoint']).toBe('flag --s3-endpoint');
  });

  it('keeps the endpoint and region from the environment when the store itself comes as a flag the command reads', async () => {
    // `wmark serve --media s3://…` reads --media itself; WMARK_S3_ENDPOINT must still reach it.
    const config = await load({ env: { WMARK_S3_ENDPOINT: 'http://minio.env:9000', WMARK_S3_REGION: 'eu-west-1' } });
    expect(config.media).toEqual({ s3Endpoint: 'http://minio.env:9000', s3Region: 'eu-west-1' });
    expect(mediaFlags({ media: 's3://flag-bucket/p' }, config)).toEqual({
      media: 's3://flag-bucket/p',
      s3Endpoint: 'http://minio.env:9000',
      s3Region: 'eu-west-1',
    });
  });

  it('names an endpoint that is not an http(s) URL, and unknown keys', async () => {
    const error = await loadError({ env: { WMARK_S3_ENDPOINT: 'minio:9000' } });
    expect(error.message).toContain('env WMARK_S3_ENDPOINT: expected an http(s) URL');
    write('.wmarkrc.json', { media: { bucket: 'x' } });
    const fileError = await loadError();
    expect(fileError.message).toContain('media.bucket: unknown key');
    expect(fileError.hint).toContain('Known keys in "media": url, s3Endpoint, s3Region.');
  });
});
