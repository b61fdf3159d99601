// Publishing by rename: files and folders appear complete or not at all.
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Writes to a sibling temp file with exactly `mode` (whatever the umask), fsyncs, then renames over the target. */
export async function writeFileAtomic(file: string, data: string | Uint8Array, mode = 0o644): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(tmp, 'wx', mode);
  try {
    await handle.chmod(mode);
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, file);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}

/** Moves a finished staging folder into place; the target must not exist (an existing one means another writer won). */
export async function publishDir(staging: string, target: string): Promise<'published' | 'exists'> {
  await mkdir(path.dirname(target), { recursive: true });
  try {
    await rename(staging, target);
    return 'published';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTEMPTY' || code === 'EEXIST') {
      await rm(staging, { recursive: true, force: true });
      return 'exists';
    }
    throw error;
  }
}

export { writeFile };
