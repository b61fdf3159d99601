// The service secret (HMAC key for signed URLs and tokens), created once per data dir with mode 0600.
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export function loadOrCreateSecret(file: string): Buffer {
  try {
    return decode(readFileSync(file, 'utf8'), file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600 });
  try {
    // link() fails if the target exists, so two processes starting together agree on one secret.
    linkSync(tmp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    rmSync(tmp, { force: true });
  }
  return decode(readFileSync(file, 'utf8'), file);
}

function decode(text: string, file: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64url');
  if (key.length < 32) throw new Error(`${file} does not hold a valid secret (expected 32 bytes, base64url)`);
  return key;
}
