// The shape of a wmark config file (cosmiconfig), validated with zod so every bad field is named.
import { z } from 'zod';
import { API_VERSIONS } from '../core/api-version.js';
import { parseTrustedProxies } from '../core/forwarded-for.js';
import { isHttpUrl } from '../core/http-url.js';
import { describeValue } from '../core/issue-text.js';

const X264_PRESETS = ['ultrafast', 'superfast', 'veryfast', 'faster', 'fast', 'medium', 'slow', 'slower', 'veryslow'] as const;
export type X264Preset = (typeof X264_PRESETS)[number];

// Each field carries one message for every way it can be wrong, so a user reads
// "expected an integer from 1 to 64, got "lots"" instead of zod's generic wording.
function expected(what: string) {
  return (issue: { input?: unknown }) => `expected ${what}, got ${describeValue(issue.input)}`;
}

function intRange(min: number, max: number) {
  const error = expected(`an integer from ${min} to ${max}`);
  return z.number({ error }).refine((n) => Number.isInteger(n) && n >= min && n <= max, { error });
}

function httpUrl() {
  const error = expected('an http(s) URL');
  return z.string({ error }).refine(isHttpUrl, { error });
}

function nonEmptyString(what: string) {
  const error = expected(what);
  return z.string({ error }).refine((s) => s.trim() !== '', { error });
}

function section<T extends z.core.$ZodLooseShape>(shape: T) {
  return z.strictObject(shape, { error: expected('an object') });
}

const encodeSchema = section({
  preset: z.enum(X264_PRESETS, { error: expected(`one of ${X264_PRESETS.join(', ')}`) }).optional(),
  crf: intRange(0, 51).optional(),
});

const serverSchema = section({
  host: nonEmptyString('a host name or address').optional(),
  // 0 asks the OS for a free port (handy for tests and side-by-side instances).
  port: intRange(0, 65535).optional(),
  tokenTtlSeconds: intRange(60, 604800).optional(),
  // The reverse proxies whose X-Forwarded-For names the client (README.md, "The service: `wmark serve`").
  trustProxy: trustedProxyList().optional(),
  // GET /metrics for callers on other machines too (a Prometheus elsewhere); loopback callers always get it.
  metricsPublic: z.boolean({ error: expected('true or false') }).optional(),
  // On SIGTERM or Ctrl-C, how long serve drains (/readyz 503, answers close their connections) before it stops
  // listening: above a load balancer's checks interval × fall (README.md, "Rolling restarts"); 0 stops at once.
  drainSeconds: intRange(0, 3600).optional(),
  // How many leading bits of an IPv6 client's address the failed-credential limit counts it by (README.md, "Security
  // model"): 64 by default, since a subscriber usually holds a whole /64.
  authIpv6Prefix: intRange(32, 128).optional(),
  // How long an instance answers a repeated watermark request from what it kept (README.md, "State in PostgreSQL"):
  // a change anywhere drops it at once; this bounds only what a notice lost without its connection dropping costs.
  requestCacheSeconds: intRange(0, 3600).optional(),
});

function trustedProxyList() {
  const error = expected('a comma-separated list of IP addresses or CIDR ranges (e.g. 127.0.0.1,10.0.0.0/8)');
  return z.string({ error }).refine((s) => parseTrustedProxies(s) !== undefined, { error });
}

const remoteSchema = section({
  url: httpUrl().optional(),
  api: z.enum(API_VERSIONS, { error: expected(`one of ${API_VERSIONS.join(', ')}`) }).optional(),
});

function queueUrl() {
  const error = expected('a redis:// or rediss:// URL');
  return z.string({ error }).refine((s) => /^rediss?:\/\/[^\s/]+/.test(s), { error });
}

/**
 * The render farm's Redis (README.md, "Running a render farm"): with a URL, `wmark serve` hands segment renders to
 * `wmark worker`s.
 */
const queueSchema = section({
  url: queueUrl().optional(),
});

/**
 * The render farm's shared media store: with a URL, `wmark serve --queue` keeps rendered media there and
 * `wmark worker` reads and writes it. The endpoint and region are for S3-compatible servers; credentials are the AWS
 * SDK's own (env, profile), never in wmark's config.
 */
const mediaSchema = section({
  // Checked where it is opened (BAD_MEDIA_URL), the same for a flag, an env var and this file.
  url: nonEmptyString('an s3://BUCKET/PREFIX URL or an absolute folder path').optional(),
  s3Endpoint: httpUrl().optional(),
  s3Region: nonEmptyString('an S3 region name').optional(),
});

/**
 * The state database (README.md, "State in PostgreSQL"): with a postgres:// URL, every record lives there and no
 * SQLite file is made in the data folder.
 */
const dbSchema = section({
  // Checked where it is opened (BAD_DB_URL), the same for a flag, an env var and this file, and never echoed whole:
  // it carries a password.
  url: nonEmptyString('a postgres:// URL').optional(),
});

export const wmarkConfigSchema = section({
  dataDir: nonEmptyString('a folder path').optional(),
  ffmpeg: nonEmptyString('a path to ffmpeg').optional(),
  ffprobe: nonEmptyString('a path to ffprobe').optional(),
  font: nonEmptyString('a path to a font file').optional(),
  workers: intRange(1, 64).optional(),
  encode: encodeSchema.optional(),
  publicUrl: httpUrl().optional(),
  server: serverSchema.optional(),
  remote: remoteSchema.optional(),
  queue: queueSchema.optional(),
  media: mediaSchema.optional(),
  // How long `wmark serve` and `wmark worker` give the work in hand when asked to stop (0: none).
  shutdownTimeoutSeconds: intRange(0, 3600).optional(),
  db: dbSchema.optional(),
  // The key behind signed links, tokens and forensic codes, when the operator keeps it (base64url, 32 bytes or more;
  // checked where the engine opens). Without it: the database server's, else the data folder's file.
  secret: nonEmptyString('a base64url secret of 32 bytes or more').optional(),
  color: z.boolean({ error: expected('true or false') }).optional(),
});

/** What a config file may hold; every field optional, unknown keys rejected. */
export type WmarkConfig = z.infer<typeof wmarkConfigSchema>;

/** The keys allowed at a dotted path of the config ('' = top level), for "unknown key" hints. */
export function knownKeysAt(path: readonly PropertyKey[]): string[] {
  const sections: Record<string, z.ZodObject> = {
    '': wmarkConfigSchema,
    encode: encodeSchema,
    server: serverSchema,
    remote: remoteSchema,
    queue: queueSchema,
    media: mediaSchema,
    db: dbSchema,
  };
  const schema = sections[path.map(String).join('.')];
  return schema ? Object.keys(schema.shape) : [];
}
