// The error catalogue: every code wmark raises, declared once with its kind, HTTP status, exit code and hint, and
// the WmarkError that carries one. The CLI prints code + message + hint and exits with the code's exit status; the
// server answers `{message, code}` with its HTTP status. (As hls.js keeps ErrorTypes/ErrorDetails in one place.)

/** What went wrong, broadly: decides how callers react (retry, stop a batch, log a stack) more than the wording. */
export type ErrorKind =
  | 'usage' // the input is wrong: fix the request or the flags
  | 'auth' // missing or refused credentials, or a signed link that is not valid
  | 'not-found'
  | 'conflict'
  | 'gone'
  | 'unprocessable' // a valid request this video or file cannot satisfy
  | 'limit' // too much, too fast
  | 'config'
  | 'remote' // the remote service is unreachable or answered nonsense
  | 'unavailable' // a part this service needs (the farm's queue, its media store, the database) does not answer now
  | 'engine' // ffmpeg or the media pipeline failed
  | 'timeout'
  | 'interrupted'
  | 'unexpected';

export interface ErrorSpec {
  kind: ErrorKind;
  http: number;
  exit: number;
  hint?: string;
  /** Seconds an HTTP client should wait before sending the request again (the answer's Retry-After). */
  retryAfter?: number;
}

// Exit codes (README): 0 ok, 1 unexpected, 2 usage, 3 config, 4 auth, 5 remote unavailable, 6 engine, 8 no mark
// found, 124 timeout, 130 interrupted.
const usage = (http = 400, hint?: string): ErrorSpec => ({ kind: 'usage', http, exit: 2, ...(hint ? { hint } : {}) });
const auth = (http: number, hint?: string): ErrorSpec => ({ kind: 'auth', http, exit: 4, ...(hint ? { hint } : {}) });
const notFound = (hint?: string): ErrorSpec => ({ kind: 'not-found', http: 404, exit: 2, ...(hint ? { hint } : {}) });
const unprocessable = (hint?: string, exit = 2): ErrorSpec => ({ kind: 'unprocessable', http: 422, exit, ...(hint ? { hint } : {}) });
const engine = (hint?: string): ErrorSpec => ({ kind: 'engine', http: 500, exit: 6, ...(hint ? { hint } : {}) });
const remote = (hint?: string): ErrorSpec => ({ kind: 'remote', http: 502, exit: 5, ...(hint ? { hint } : {}) });
/** A dependency that does not answer now: 503 with Retry-After, so clients and load balancers come back later. */
const unavailable = (hint: string): ErrorSpec => ({ kind: 'unavailable', http: 503, exit: 5, hint, retryAfter: 5 });

const SEE_VIDEOS = 'List videos with `wmark video list`, or ingest it first with `wmark ingest`.';
const SOURCE_HINT = 'Check the path, or pass an http(s) URL.';
const SIGNED_LINK_HINT = 'Ask for the watermark again (the same request returns the same watermark with fresh links).';

export const ERRORS = {
  // ---- usage: requests, flags, files
  USAGE: usage(400, 'See --help.'),
  BAD_FLAG: usage(),
  BAD_DURATION: usage(),
  BAD_CONTAINERS: usage(),
  BAD_MAP: usage(),
  BAD_FORENSIC: usage(400, 'Give 0..65535, two ASCII characters (ascii:AB) or base64 of two bytes (base64:QUI=).'),
  BAD_EXPIRATION: usage(),
  BAD_HREF: usage(),
  BAD_REMOTE: usage(400, 'e.g. --remote https://watermark.example.com'),
  REMOTE_URL_REQUIRED: usage(400, 'Give --remote URL, set WMARK_API_URL, put remote.url in the config file, or log in with `wmark auth login --remote URL`.'),
  VIDEO_REQUIRED: usage(),
  VIDEO_CONFLICT: usage(),
  SETTINGS_REQUIRED: usage(400, 'e.g. wmark watermark --key KEY --text "for alice@example.com"'),
  SETTINGS_CONFLICT: usage(),
  SETTINGS_INVALID: usage(),
  TEXT_REQUIRED: usage(),
  MAP_NEEDS_TEMPLATE: usage(),
  BATCH_NEEDS_TEMPLATE: usage(),
  BATCH_AND_MAP: usage(),
  BATCH_INVALID: usage(),
  OUT_NEEDS_WAIT: usage(),
  OUT_LOCAL_ONLY: usage(400, 'Download the mp4 link instead.'),
  PUBLIC_URL_LOCAL_ONLY: usage(),
  LOCAL_ONLY: usage(),
  TEMPLATE_INVALID: usage(),
  TEMPLATE_MAPPING_INVALID: usage(),
  TEMPLATE_BUILTIN: usage(),
  INPUT_NOT_READABLE: usage(),
  INVALID_JSON: usage(),
  STDIN_IS_TTY: usage(400, 'Pipe the file in, or give its path instead of "-".'),
  SOURCE_REQUIRED: usage(),
  LEAK_NOT_FOUND: usage(),
  PORT_IN_USE: usage(400, 'Stop what holds it, choose another with --port, or give --port 0 to take any free port.'),
  PORT_NOT_ALLOWED: usage(400, 'Ports below 1024 need privileges: choose another with --port, or --port 0 for any free port.'),
  BAD_MEDIA_URL: usage(400, 'Give s3://BUCKET/PREFIX (bucket names: 3-63 of a-z, 0-9, dot, dash) or an absolute folder path, e.g. --media /mnt/wmark.'),
  BAD_QUEUE_URL: usage(400, 'Give redis://HOST:PORT (optionally redis://:PASSWORD@HOST:PORT/DB).'),
  BAD_DB_URL: usage(400, 'Give postgres://USER:PASSWORD@HOST:PORT/DATABASE (or postgresql://...).'),
  // HTTP requests
  VALIDATION_FAILED: usage(),
  INVALID_BODY: usage(),
  BAD_PATH: usage(),
  TEXT_NOT_STORABLE: usage(400, 'Send text as UTF-8, without NUL characters or unpaired surrogates.'),
  BODY_TOO_LARGE: usage(413),
  UNSUPPORTED_MEDIA_TYPE: usage(415),
  METHOD_NOT_ALLOWED: usage(405),

  // ---- auth (CLI exit 4)
  AUTH_REQUIRED: auth(401, 'Send x-api-client-id and x-api-key, or Authorization: Bearer <token> from GET /1.0/authenticate/accessToken.'),
  AUTH_INVALID: auth(401),
  TOKEN_INVALID: auth(401),
  TOKEN_EXPIRED: auth(401),
  TOKEN_REFUSED: auth(401),
  NOT_LOGGED_IN: auth(401),
  CREDENTIALS_REQUIRED: auth(401),
  SIGNATURE_INVALID: auth(403, SIGNED_LINK_HINT),
  SIGNATURE_EXPIRED: auth(403, SIGNED_LINK_HINT),
  LINK_EXPIRED: auth(403, 'A long-poll link expires shortly after READY: use the playlist link, or ask for the watermark again.'),
  // GET /metrics from another machine, unless the operator opened it (docs/api.md, "GET /metrics").
  METRICS_NOT_PUBLIC: auth(
    403,
    "Scrape /metrics from serve's own machine, or start serve with --metrics-public (WMARK_METRICS_PUBLIC=1, server.metricsPublic in the config) to let other machines scrape it.",
  ),

  // ---- not found, conflict, gone (CLI exit 2)
  NOT_FOUND: notFound(),
  VIDEO_NOT_FOUND: notFound(SEE_VIDEOS),
  TEMPLATE_NOT_FOUND: notFound('See `wmark template list`.'),
  WATERMARK_NOT_FOUND: notFound('See `wmark watermark list` for the ids.'),
  CLIENT_NOT_FOUND: notFound('See `wmark auth keys list`.'),
  NOT_READY: notFound(),
  MEDIA_NOT_FOUND: notFound(),
  KEY_EXISTS: { kind: 'conflict', http: 409, exit: 2 },
  WATERMARK_BUSY: { kind: 'conflict', http: 409, exit: 2 },
  VIDEO_NOT_READY: { kind: 'conflict', http: 409, exit: 2, hint: 'Try again when its status is INGESTED.' },
  WATERMARK_EXPIRED: {
    kind: 'gone',
    http: 410,
    exit: 2,
    hint: 'Change any setting to create a new watermark with a new expiration (docs/settings.md#identity-and-expiration).',
  },

  // ---- a valid request the input cannot satisfy (HTTP 422, CLI exit 2: the input is the user's)
  SOURCE_NOT_FOUND: unprocessable(SOURCE_HINT),
  SOURCE_NOT_A_FILE: unprocessable(),
  SOURCE_EMPTY: unprocessable(),
  SOURCE_CHANGED: unprocessable(),
  SOURCE_UNREACHABLE: unprocessable('Check the URL, and that the server is up and reachable from here.'),
  SOURCE_TOO_LARGE: unprocessable('The server caps downloads from API clients; ingest large files with the CLI on the server itself.'),
  SOURCE_TIMEOUT: unprocessable('The server caps how long a download from an API client may take; ingest it with the CLI on the server itself.'),
  // A source an API client may not make the server read (the server's source policy): local files outside --source-root, private networks.
  SOURCE_PATH_FORBIDDEN: {
    kind: 'auth',
    http: 403,
    exit: 4,
    hint: 'Put the file under a folder the server was started with (wmark serve --source-root DIR), or pass an http(s) URL.',
  },
  SOURCE_ADDRESS_FORBIDDEN: { kind: 'auth', http: 403, exit: 4, hint: 'Use a public URL, or start the server with --allow-private-sources.' },
  NOT_A_VIDEO: unprocessable(),
  // An IMAGE setting's image (docs/settings.md, "IMAGE settings"), checked before the request is accepted.
  IMAGE_UNREACHABLE: unprocessable('Check the URL or path, and that the server is up and reachable from where wmark runs.'),
  IMAGE_TOO_LARGE: unprocessable('Images may be up to 10 MB and 4096x4096 pixels; scale the logo down first.'),
  IMAGE_UNSUPPORTED: unprocessable('Give a still PNG (with transparency if you like), JPEG or WebP image.'),
  NOT_AN_IMAGE: unprocessable('Give the URL or path of a PNG, JPEG or WebP file.'),
  IMAGE_INVISIBLE: unprocessable('Check the export: the logo needs opaque pixels (an alpha above 0) to be seen.'),
  NO_VIDEO_STREAM: unprocessable(),
  BAD_FRAME_RATE: unprocessable(),
  BAD_DIMENSIONS: unprocessable(),
  NO_FRAMES: unprocessable(),
  FORENSIC_TOO_SHORT: unprocessable(),
  FORENSIC_NOT_ENABLED: unprocessable('Ingest it again under a new key with --forensic (videos of 5 minutes or more).'),
  VIDEO_FAILED: unprocessable(),
  LEAK_TOO_SHORT: unprocessable(),
  NO_MARK: unprocessable(undefined, 8),

  // ---- limits
  RATE_LIMITED: { kind: 'limit', http: 429, exit: 5 },
  NOT_READY_YET: { kind: 'limit', http: 503, exit: 5, hint: 'Send the same request again shortly.', retryAfter: 5 },
  RANGE_NOT_SATISFIABLE: usage(416),

  // ---- config (exit 3)
  CONFIG_INVALID: { kind: 'config', http: 500, exit: 3 },
  // A --data-dir or WMARK_HOME that names no folder is more often a typo than a wish for a new, empty installation.
  DATA_DIR_MISSING: {
    kind: 'config',
    http: 500,
    exit: 3,
    hint: 'Check the path. `wmark ingest`, `wmark serve` and `wmark demo` start a new data folder there when one is wanted.',
  },
  CREDENTIALS_INVALID: { kind: 'config', http: 500, exit: 3, hint: 'Remove it (wmark auth logout --all) and log in again.' },
  CREDENTIALS_UNREADABLE: { kind: 'config', http: 500, exit: 3 },
  DATABASE_TOO_NEW: { kind: 'config', http: 500, exit: 3 },
  // `wmark db copy` into a database that already holds state: copying over it would mix two installations.
  DATABASE_NOT_EMPTY: {
    kind: 'conflict',
    http: 409,
    exit: 2,
    hint: 'Copy into an empty database (CREATE DATABASE ...), or empty this one first if nothing in it is needed.',
  },

  // ---- remote service (exit 5)
  REMOTE_UNREACHABLE: remote('Check the URL (--remote, WMARK_API_URL or remote.url in the config) and that the service is running.'),
  BAD_RESPONSE: remote('Check that the URL points at a watermarking service that speaks API 1.0 or 2.0 (docs/api.md).'),
  NO_HREF: remote(),
  // The render farm's shared parts: the Redis queue and the media store, reached over the network.
  QUEUE_UNREACHABLE: {
    kind: 'remote',
    http: 503,
    exit: 5,
    hint: 'Check --queue redis://HOST:PORT (or WMARK_QUEUE_URL) and that Redis runs and is reachable from here.',
  },
  MEDIA_STORE_FAILED: {
    kind: 'remote',
    http: 502,
    exit: 5,
    hint: 'Check --media and --s3-endpoint, the bucket, and the credentials (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or a profile).',
  },
  // A dependency that answered before and does not now: the request is refused at once, the connection is retried in
  // the background, and work already under way waits for it (docs/api.md, "Errors"; README, "Running a render farm").
  QUEUE_UNAVAILABLE: unavailable(
    "The render farm's queue (Redis) does not answer; wmark reconnects by itself. Send the request again shortly (GET /readyz says when).",
  ),
  MEDIA_STORE_UNAVAILABLE: unavailable('The shared media store does not answer; wmark keeps trying. Send the request again shortly (GET /readyz says when).'),
  // The PostgreSQL state database (--db, WMARK_DB_URL, db.url), reached over the network: refused at start (exit 5),
  // or lost while serving (503 with Retry-After; jobs wait for it and go on, as for the queue and the store).
  DATABASE_UNAVAILABLE: unavailable(
    'Check --db postgres://USER:PASSWORD@HOST:PORT/DATABASE (or WMARK_DB_URL, db.url in the config): the address, the user and password, and that PostgreSQL runs and is reachable from here. wmark serve keeps trying: send the request again shortly (GET /readyz says when).',
  ),

  // ---- engine: ffmpeg and the media pipeline (exit 6)
  FFMPEG_FAILED: engine(),
  FFMPEG_CRASHED: engine(),
  FFMPEG_STALLED: engine(
    'ffmpeg stopped making progress. Run it again; if it stalls again at the same place, the input may be damaged (run `wmark doctor`, and try the source in another player).',
  ),
  FFMPEG_NOT_FOUND: engine('Run `wmark doctor`, or set WMARK_FFMPEG / WMARK_FFPROBE.'),
  PROBE_FAILED: engine(),
  FRAME_COUNT_MISMATCH: engine(),
  /** An H.264 stream wmark reads is malformed or uses a feature the band splice does not handle. */
  BITSTREAM_INVALID: engine(),
  /** A band stream does not fit the shared stream it is spliced into (frame types, sizes, parameter sets). */
  SPLICE_MISMATCH: engine(),
  SEGMENT_LIST_MISMATCH: engine(),
  PUBLISH_FAILED: engine(),
  INGEST_FAILED: engine(),
  WATERMARK_FAILED: engine(),
  SIDECAR_MISSING: engine(),
  LEAK_DECODE_FAILED: engine('Check that the file plays (e.g. `ffprobe FILE`); a truncated download may decode only in part.'),
  DOCTOR_FAILED: engine(),
  DEMO_FAILED: engine(),
  // A render-farm worker that must not render: its output would differ from what serve planned.
  WORKER_VERSION_MISMATCH: engine('Run the same wmark version on serve and on every worker (`wmark --version`).'),
  WORKER_FONT_MISMATCH: engine('Give every worker the font serve uses (the bundled one, or the same --font / WMARK_FONT file).'),
  WORKER_UNUSABLE: engine('Run `wmark doctor` on the worker machine, or set WMARK_FFMPEG / WMARK_FONT.'),
  TASK_INVALID: engine('Check that serve and the workers run the same wmark version.'),

  // ---- time and interruption
  TIMEOUT: { kind: 'timeout', http: 504, exit: 124 },
  INTERRUPTED: { kind: 'interrupted', http: 503, exit: 130 },
  CLIENT_CLOSED: { kind: 'interrupted', http: 400, exit: 130 },
  CANCELLED: { kind: 'interrupted', http: 503, exit: 130 },
  // GET /readyz from the moment serve is asked to stop (a rolling restart's drain, README "Rolling restarts").
  SHUTTING_DOWN: {
    kind: 'interrupted',
    http: 503,
    exit: 130,
    hint: 'This instance is stopping and will take no new connections shortly: a load balancer sends requests to the other instances.',
    retryAfter: 5,
  },

  // ---- bugs
  UNEXPECTED: { kind: 'unexpected', http: 500, exit: 1, hint: 'Run again with --verbose for details; please report it if it persists.' },
  INTERNAL: { kind: 'unexpected', http: 500, exit: 1 },
  MEDIA_KEY_INVALID: { kind: 'unexpected', http: 500, exit: 1 },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERRORS;

export interface WmarkErrorOptions {
  /** Replaces the catalogue's hint for this occurrence (e.g. naming the file or flag at fault). */
  hint?: string;
  details?: string[];
  cause?: unknown;
  /** HTTP headers the server adds to this error's answer (Retry-After, Allow). */
  headers?: Record<string, string>;
}

export class WmarkError extends Error {
  readonly code: string;
  readonly kind: ErrorKind;
  readonly hint?: string;
  readonly details: string[];
  readonly exitCode: number;
  readonly httpStatus: number;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: WmarkErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const spec: ErrorSpec = ERRORS[code];
    this.name = 'WmarkError';
    this.code = code;
    this.kind = spec.kind;
    this.hint = options.hint ?? spec.hint;
    this.details = options.details ?? [];
    this.exitCode = spec.exit;
    this.httpStatus = spec.http;
    this.headers = { ...(spec.retryAfter !== undefined ? { 'Retry-After': String(spec.retryAfter) } : {}), ...options.headers };
  }

  toJSON(): { code: string; message: string; hint?: string; details?: string[] } {
    return {
      code: this.code,
      message: this.message,
      ...(this.hint ? { hint: this.hint } : {}),
      ...(this.details.length ? { details: this.details } : {}),
    };
  }
}

/**
 * An error a remote service answered with: its own code (not in our catalogue) and a kind read from the HTTP status.
 * The one place a code is not declared above, because another service declares it.
 */
export class ServiceError extends WmarkError {
  constructor(serviceCode: string, kind: ErrorKind, exitCode: number, message: string, options: WmarkErrorOptions & { httpStatus: number }) {
    super('UNEXPECTED', message, options);
    Object.assign(this, { code: serviceCode, kind, exitCode, httpStatus: options.httpStatus, hint: options.hint });
  }
}

/** Issues from a validator become one error that lists every problem. */
export function validationError(code: ErrorCode, issues: string[], hint?: string): WmarkError {
  const message = issues.length === 1 ? issues[0]! : `${issues.length} problems:\n  - ${issues.join('\n  - ')}`;
  return new WmarkError(code, message, { details: issues, ...(hint ? { hint } : {}) });
}

export function isWmarkError(error: unknown): error is WmarkError {
  return error instanceof WmarkError;
}

/** True for errors that end a run on purpose (Ctrl-C, a cancelled job), not by failure. */
function isInterruption(error: unknown): boolean {
  return isWmarkError(error) && error.kind === 'interrupted';
}

/** True when a dependency did not answer (QUEUE_UNAVAILABLE, MEDIA_STORE_UNAVAILABLE, DATABASE_UNAVAILABLE): nothing is wrong with the work. */
export function isUnavailable(error: unknown): boolean {
  return isWmarkError(error) && error.kind === 'unavailable';
}

/** True for errors that leave a job queued to run again (stopped on purpose, or a dependency away), not failed. */
export function leavesJobQueued(error: unknown): boolean {
  return isInterruption(error) || isUnavailable(error);
}
