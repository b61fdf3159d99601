// Builds dist/ once before the suite so tests that spawn bin/wmark.js run the current sources, not a stale build: tsc's
// output (the library, and what tests import from dist/) and the CLI bundle bin/wmark.js runs first.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  // Pure unit runs need no build; WMARK_SKIP_BUILD=1 saves the compile (and works while other layers are mid-change).
  if (process.env.WMARK_SKIP_BUILD === '1') return;
  const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
  execFileSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  execFileSync(process.execPath, [path.join(root, 'scripts', 'build-cli.mjs')], { cwd: root, stdio: 'inherit' });
}
