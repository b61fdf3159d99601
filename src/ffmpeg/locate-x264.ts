// Finds the patched x264 CLI band rendering needs: WMARK_X264, else where scripts/build-x264.sh installs it. None
// found means band rendering is off and whole frames are rendered as before.
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function locateBandX264(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.WMARK_X264) return existsSync(env.WMARK_X264) ? env.WMARK_X264 : undefined;
  const cache = env.WMARK_X264_CACHE ?? path.join(os.homedir(), '.cache', 'wmark', 'x264');
  const built = path.join(cache, 'bin', 'x264');
  return existsSync(built) ? built : undefined;
}
