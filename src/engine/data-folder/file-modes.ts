// Private state (README.md, "Security model"): the data folder and everything in it is readable by its owner only.
// The database holds key hashes and viewer names, media holds every watermarked video. New files are made private by
// the process umask (it also covers what ffmpeg children create), the database file by an explicit mode (SQLite gives
// -wal/-shm the same mode), and files left by an older version are tightened when the engine opens.
import { chmodSync, closeSync, lstatSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import { chmod, lstat, readdir } from 'node:fs/promises';
import path from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
const PRIVATE_FILE_MODE = 0o600;
const GROUP_OTHER = 0o077;

/** The umask the user started us with, before the private one: copies handed back to the user (`--out`) follow it. */
let userUmask: number | undefined;

/** From now on, files and folders this process (and the children it starts) creates are private to its user. */
export function usePrivateUmask(): void {
  const current = process.umask();
  userUmask ??= current;
  process.umask(current | GROUP_OTHER);
}

/** Gives a tree copied out of the data folder the modes the user's own umask would have given it. */
export async function applyUserModes(root: string): Promise<void> {
  const mask = userUmask ?? process.umask();
  const walk = async (p: string): Promise<void> => {
    const info = await lstat(p);
    if (info.isSymbolicLink()) return;
    await chmod(p, (info.isDirectory() ? 0o777 : 0o666) & ~mask);
    if (info.isDirectory()) for (const name of await readdir(p)) await walk(path.join(p, name));
  };
  await walk(root);
}

/** Creates `dir` (and missing parents) as 0700, or tightens it when it exists. */
export function privateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  tighten(dir);
}

/** Creates an empty `file` as 0600 if it does not exist (so SQLite opens a private file), else tightens it. */
export function privateFile(file: string): void {
  closeSync(openSync(file, 'a', PRIVATE_FILE_MODE));
  tighten(file);
}

/**
 * Removes group and other permissions from `root` and, when `root` itself was not yet private (a data folder from
 * before this rule), from everything below it. Symbolic links are neither followed nor changed.
 */
export function tightenTree(root: string): void {
  const wasOpen = (lstatSync(root).mode & GROUP_OTHER) !== 0;
  tighten(root);
  if (!wasOpen) return;
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isSymbolicLink()) continue;
      tighten(full);
      if (entry.isDirectory()) walk(full);
    }
  };
  walk(root);
}

/** Drops group/other bits from one file or folder (no-op when already private or gone). */
export function tighten(file: string): void {
  try {
    const st = lstatSync(file);
    if (st.isSymbolicLink() || (st.mode & GROUP_OTHER) === 0) return;
    chmodSync(file, st.mode & 0o7700 & ~GROUP_OTHER);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
