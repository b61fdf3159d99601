// The remote-mode token file: <config dir>/credentials.json, one entry per service base URL, mode 0600, written then renamed into place.
import { mkdir, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { z } from 'zod';
import { configDir, type Env } from '../config/paths.js';
import { WmarkError } from '../core/errors.js';

const CREDENTIALS_FILE = 'credentials.json';

const serviceSchema = z.looseObject({
  baseUrl: z.string(),
  clientId: z.string().optional(),
  token: z.string().optional(),
  /** Unix ms; null when neither the response nor the token said. */
  expiresAt: z.number().nullable().default(null),
  obtainedAt: z.number().optional(),
  /** The API version found at login (2.0 when the service has it). */
  api: z.enum(['1.0', '2.0']).optional(),
  /** Only with `auth login --save-key`: lets an expired token be renewed without the env vars. */
  apiKey: z.string().optional(),
});

const fileSchema = z.looseObject({
  version: z.literal(1).default(1),
  current: z.string().optional(),
  services: z.record(z.string(), serviceSchema).default({}),
});

export type StoredService = z.infer<typeof serviceSchema>;
export type CredentialsFile = z.infer<typeof fileSchema>;

export function credentialsPath(env: Env): string {
  return path.join(configDir(env), CREDENTIALS_FILE);
}

/** One spelling per service: no query or fragment, no trailing slash. */
export function normalizeBaseUrl(url: string): string {
  const u = new URL(url);
  u.search = '';
  u.hash = '';
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
}

export async function readCredentials(file: string): Promise<CredentialsFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, services: {} };
    throw new WmarkError('CREDENTIALS_UNREADABLE', `cannot read ${file}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new WmarkError('CREDENTIALS_INVALID', `${file} is not valid JSON`, { hint: `Remove it (wmark auth logout --all) and log in again.` });
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success)
    throw new WmarkError('CREDENTIALS_INVALID', `${file} has an unexpected shape`, { hint: `Remove it (wmark auth logout --all) and log in again.` });
  return parsed.data;
}

/** Writes the whole file: a 0600 sibling is written and synced, then renamed over the old one, so no reader sees half a file. */
export async function writeCredentials(file: string, data: CredentialsFile): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await writeFileAtomic(file, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
}

export async function saveService(file: string, service: StoredService, options: { makeCurrent?: boolean } = {}): Promise<void> {
  const data = await readCredentials(file);
  data.services[service.baseUrl] = service;
  if (options.makeCurrent ?? true) data.current = service.baseUrl;
  await writeCredentials(file, data);
}

/** Removes one service (or all); the file goes when nothing is left. Returns the base URLs removed. */
export async function removeServices(file: string, baseUrl: string | 'all'): Promise<string[]> {
  const data = await readCredentials(file);
  const removed = baseUrl === 'all' ? Object.keys(data.services) : baseUrl in data.services ? [baseUrl] : [];
  for (const url of removed) delete data.services[url];
  if (data.current !== undefined && !(data.current in data.services)) delete data.current;
  if (Object.keys(data.services).length === 0) await rm(file, { force: true });
  else if (removed.length) await writeCredentials(file, data);
  return removed;
}

/** Permission bits of the file when it is readable by others than its owner (a warning for `auth status`). */
export async function looseMode(file: string): Promise<number | undefined> {
  try {
    const mode = (await stat(file)).mode & 0o777;
    return mode & 0o077 ? mode : undefined;
  } catch {
    return undefined;
  }
}
