// The service secret: the HMAC key behind signed links and access tokens, and the seed of forensic codes. It is one
// per installation. An operator may give it (config `secret`, env WMARK_SECRET); with a database server, every
// instance reads it from that database, where the first to start stores one; otherwise it is a file in the data
// folder, created once with mode 0600.
import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { WmarkError } from '../../core/errors.js';

/** Where an engine's secret comes from. */
export interface SecretSource {
  /** The data folder's secret file. */
  file: string;
  /** The operator's secret (base64url, at least 32 bytes), from config or env. */
  given?: string | undefined;
  /** With a database server: its shared secret, stored from `candidate` when it holds none. */
  shared?: ((candidate: string) => Promise<string>) | undefined;
}

const MIN_BYTES = 32;

/** The name the secret has among a database's shared secrets. */
export const SIGNING_SECRET = 'signing';

export async function resolveSecret(source: SecretSource): Promise<Buffer> {
  const given = source.given === undefined ? undefined : decode(source.given, 'the configured secret (config `secret` or WMARK_SECRET)');
  if (source.shared) {
    // A data folder moved into the database keeps its key, so the links and forensic codes it made stay valid.
    const candidate = given ?? (existsSync(source.file) ? readSecretFile(source.file) : randomBytes(MIN_BYTES));
    const stored = decode(await source.shared(candidate.toString('base64url')), 'the database’s shared secret');
    if (given && !stored.equals(given)) throw mismatch('the database holds a different one');
    return stored;
  }
  if (given) {
    if (existsSync(source.file) && !readSecretFile(source.file).equals(given)) throw mismatch(`${source.file} holds a different one`);
    return given;
  }
  return loadOrCreateSecret(source.file);
}

function mismatch(where: string): WmarkError {
  return new WmarkError('CONFIG_INVALID', `the configured secret (config \`secret\` or WMARK_SECRET) does not match the one in use: ${where}`, {
    hint: 'Links, access tokens and forensic codes were made with the secret in use: give that one, or leave the setting out.',
  });
}

function readSecretFile(file: string): Buffer {
  return decode(readFileSync(file, 'utf8'), file);
}

export function loadOrCreateSecret(file: string): Buffer {
  try {
    return readSecretFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${randomBytes(MIN_BYTES).toString('base64url')}\n`, { mode: 0o600 });
  try {
    // link() fails if the target exists, so two processes starting together agree on one secret.
    linkSync(tmp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    rmSync(tmp, { force: true });
  }
  return readSecretFile(file);
}

function decode(text: string, what: string): Buffer {
  const trimmed = text.trim();
  const key = Buffer.from(trimmed, 'base64url');
  // Buffer.from skips characters outside the alphabet: a round trip shows whether the text was base64url at all.
  if (key.length < MIN_BYTES || key.toString('base64url') !== trimmed.replace(/=+$/, '')) {
    throw new WmarkError('CONFIG_INVALID', `${what} is not a valid secret: expected ${MIN_BYTES} or more bytes, base64url`, {
      hint: "Make one with: node -e \"console.log(require('node:crypto').randomBytes(32).toString('base64url'))\"",
    });
  }
  return key;
}
