// Publishing a folder by rename: it appears complete or not at all (files go through write-file-atomic).
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';

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
