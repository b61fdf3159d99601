// Builds dist/ once before the suite so tests that spawn bin/wmark.js run the current sources, not a stale build.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
  execFileSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
}
