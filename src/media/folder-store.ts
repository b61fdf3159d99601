// A media store in a folder: this machine's data dir, or a folder every machine mounts (NFS). Writes go to a hidden
// temp file beside the target and are renamed into place, so readers on any machine see whole objects only.
import { randomBytes } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { copyFile, link, mkdir, open, readdir, readFile, rename, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Dependency } from '../core/dependency.js';
import { WmarkError } from '../core/errors.js';
import { type BodyToSend, type ByteRange, checkKey, checkPrefix, checkRange, type MediaStat, type MediaStore } from './media-store.js';

/** Larger than Node's default 64 KiB: a segment is read in one or two reads, which serves segments faster. */
const READ_BUFFER = 256 * 1024;

/** Errors of a filesystem (or pair of them) that cannot hard-link: a copy does instead. */
const NO_LINK = ['EXDEV', 'EPERM', 'ENOTSUP', 'EMLINK', 'EOPNOTSUPP'];

const isMissing = (error: unknown) => ['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '');

/** A name no key can have (keys never start with a dot) and no two writers share. */
const tempBeside = (file: string) => path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.part`);
const isTempName = (name: string) => name.startsWith('.') && name.endsWith('.part');

export class FolderMediaStore implements MediaStore {
  readonly location: string;
  /** None: a folder on this machine is always there. */
  readonly dependencies: readonly Dependency[] = [];

  constructor(private readonly root: string) {
    if (!path.isAbsolute(root)) throw new WmarkError('BAD_MEDIA_URL', `the media folder must be an absolute path: ${root}`);
    this.location = root;
  }

  /** The file that holds (or will hold) the object under `key`. */
  fileOf(key: string): string {
    return path.join(this.root, checkKey(key));
  }

  describe(key: string): string {
    return this.fileOf(key);
  }

  /** The objects are files here: `use` gets them where they are, and nothing is made for it. */
  withLocalFiles<T>(keys: readonly string[], _options: { scratch: string }, use: (files: string[]) => Promise<T>): Promise<T> {
    return use(keys.map((key) => this.fileOf(key)));
  }

  /** The file's range itself; a file replaced by a shorter one meanwhile cuts the transfer when it is sent. */
  async bodyToSend(key: string, _info: MediaStat, range: ByteRange): Promise<BodyToSend> {
    return { file: this.fileOf(key), ...range };
  }

  async putFile(key: string, file: string, options: { move?: boolean } = {}): Promise<void> {
    const target = this.fileOf(key);
    await mkdir(path.dirname(target), { recursive: true });
    const missing = () => new WmarkError('INPUT_NOT_READABLE', `cannot store ${key}: ${file} does not exist`);
    if (options.move) {
      // A file on the same filesystem is renamed into place; from another one it is copied, as without `move`.
      const moved = await rename(file, target).then(
        () => true,
        (error: unknown) => ((error as NodeJS.ErrnoException).code === 'EXDEV' ? false : Promise.reject(isMissing(error) ? missing() : error)),
      );
      if (moved) return;
    }
    await copyInto(file, target, missing);
    if (options.move) await rm(file, { force: true });
  }

  async put(key: string, bytes: Buffer | string): Promise<void> {
    const target = this.fileOf(key);
    await mkdir(path.dirname(target), { recursive: true });
    const temp = tempBeside(target);
    try {
      // Flushed before the rename: a reader after a crash finds the old object or the whole new one.
      const handle = await open(temp, 'w');
      try {
        await handle.writeFile(bytes);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, target);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }

  async read(key: string): Promise<Buffer> {
    return readFile(this.fileOf(key)).catch((error: unknown) => {
      throw isMissing(error) || (error as NodeJS.ErrnoException).code === 'EISDIR' ? notFound(this, key) : error;
    });
  }

  async copy(from: string, to: string): Promise<void> {
    const target = this.fileOf(to);
    await mkdir(path.dirname(target), { recursive: true });
    // A hard link costs no bytes; filesystems without them (or a store across devices) get a copy.
    await copyInto(this.fileOf(from), target, () => notFound(this, from), { link: true });
  }

  async getFile(key: string, file: string): Promise<void> {
    await copyInto(this.fileOf(key), file, () => notFound(this, key));
  }

  async openRange(key: string, range?: ByteRange): Promise<Readable> {
    checkRange(key, range);
    const handle = await open(this.fileOf(key), 'r').catch((error: unknown) => {
      throw isMissing(error) ? notFound(this, key) : error;
    });
    const info = await handle.stat();
    if (!info.isFile()) {
      await handle.close();
      throw notFound(this, key);
    }
    if (range && range.start >= info.size) {
      await handle.close();
      throw new WmarkError('RANGE_NOT_SATISFIABLE', `${key} has ${info.size} bytes; asked from byte ${range.start}`);
    }
    // The stream closes the handle when it ends or is destroyed.
    return handle.createReadStream({ start: range?.start ?? 0, ...(range ? { end: range.end } : {}), highWaterMark: READ_BUFFER });
  }

  async stat(key: string): Promise<MediaStat | undefined> {
    try {
      const info = await stat(this.fileOf(key));
      return info.isFile() ? { size: info.size, modified: Math.floor(info.mtimeMs) } : undefined;
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async exists(key: string): Promise<boolean> {
    return (await this.stat(key)) !== undefined;
  }

  async list(prefix: string): Promise<string[]> {
    checkPrefix(prefix, { allowEmpty: true });
    const folder = prefix.slice(0, prefix.lastIndexOf('/') + 1);
    const keys: string[] = [];
    const walk = async (relative: string): Promise<void> => {
      let entries: Dirent[];
      try {
        entries = await readdir(path.join(this.root, relative), { withFileTypes: true });
      } catch (error) {
        if (isMissing(error)) return;
        throw error;
      }
      for (const entry of entries) {
        // Hidden names are writes in flight (or not ours).
        if (entry.name.startsWith('.')) continue;
        const key = `${relative}${entry.name}`;
        if (entry.isDirectory()) {
          if (key.startsWith(prefix) || prefix.startsWith(`${key}/`)) await walk(`${key}/`);
        } else if (entry.isFile() && key.startsWith(prefix)) keys.push(key);
      }
    };
    await walk(folder);
    return keys.sort();
  }

  async deletePrefix(prefix: string): Promise<number> {
    checkPrefix(prefix, { allowEmpty: false });
    const keys = await this.list(prefix);
    for (const key of keys) await unlink(this.fileOf(key)).catch((error: unknown) => (isMissing(error) ? undefined : Promise.reject(error)));
    // A whole folder goes with its empty subfolders (and any write still in flight there).
    if (prefix.endsWith('/')) await rm(path.join(this.root, prefix), { recursive: true, force: true });
    return keys.length;
  }

  async dropUnfinished(prefix: string): Promise<number> {
    checkPrefix(prefix, { allowEmpty: false });
    const folder = path.join(this.root, prefix.slice(0, prefix.lastIndexOf('/') + 1));
    const names = (await readdir(folder).catch(() => [] as string[])).filter(isTempName);
    await Promise.all(names.map((name) => rm(path.join(folder, name), { force: true })));
    return names.length;
  }

  close(): void {}
}

/** Copies `from` to `to` through a temp file beside `to`, so `to` is never seen half-written. */
async function copyInto(from: string, to: string, missing: () => WmarkError, options: { link?: boolean } = {}): Promise<void> {
  const temp = tempBeside(to);
  try {
    if (!options.link) await copyFile(from, temp);
    else
      await link(from, temp).catch((error: unknown) =>
        NO_LINK.includes((error as NodeJS.ErrnoException).code ?? '') ? copyFile(from, temp) : Promise.reject(error),
      );
    await rename(temp, to);
  } catch (error) {
    await rm(temp, { force: true });
    if (isMissing(error) && !(await stat(path.dirname(to)).catch(() => undefined))) throw error;
    throw isMissing(error) ? missing() : error;
  }
}

function notFound(store: MediaStore, key: string): WmarkError {
  return new WmarkError('MEDIA_NOT_FOUND', `no ${key} in the media store ${store.location}`);
}
