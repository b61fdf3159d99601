#!/usr/bin/env node
// Bundles the CLI into a few files under dist/bundle/ (what bin/wmark.js runs when it is there): Node loading one
// parsed file instead of a few hundred ES modules is most of a cold start. Every dynamic import() stays a split point
// (its own chunk, loaded only by the command that needs it). Packages with native code or files of their own (SQLite,
// the ffmpeg installers, the fonts, the player's hls.js) and the heavy lazily loaded clients stay outside, resolved
// from node_modules at run time as before.
//
//   node scripts/build-cli.mjs            from the repository's root; tsc's dist/ is built separately (npm run build)
import { rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const BUNDLE_DIR = path.join(root, 'dist', 'bundle');

/** Left to node_modules: native or file-carrying packages, and clients only a few commands load with import(). */
export const EXTERNAL = [
  'better-sqlite3',
  '@ffmpeg-installer/*',
  '@ffprobe-installer/*',
  'dejavu-fonts-ttf',
  'hls.js',
  'playwright-core',
  'pg',
  'pg-native',
  'bullmq',
  'ioredis',
  '@aws-sdk/*',
  'prom-client',
  // Loads the user's config files (JavaScript and TypeScript ones too) through require() and import() of its own.
  'cosmiconfig',
];

rmSync(BUNDLE_DIR, { recursive: true, force: true });
const result = await build({
  absWorkingDir: root,
  // The CLI, and the package-root module on its own so a test can ask the bundle where it finds each shipped file.
  entryPoints: { wmark: 'src/cli/main.ts', 'package-root': 'src/package-root.ts' },
  outdir: BUNDLE_DIR,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  external: EXTERNAL,
  // Bundled CommonJS packages call require() for Node's own modules and read __filename/__dirname (write-file-atomic
  // names its temporary files with it); an ES module has none of the three unless they are made.
  banner: {
    js: [
      "import { createRequire as __wmarkCreateRequire } from 'node:module';",
      "import { dirname as __wmarkDirname } from 'node:path';",
      "import { fileURLToPath as __wmarkFileURLToPath } from 'node:url';",
      'const require = __wmarkCreateRequire(import.meta.url);',
      'const __filename = __wmarkFileURLToPath(import.meta.url);',
      'const __dirname = __wmarkDirname(__filename);',
    ].join(' '),
  },
  chunkNames: 'chunks/[name]-[hash]',
  sourcemap: 'linked',
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true,
});
const outputs = Object.keys(result.metafile.outputs).filter((f) => f.endsWith('.js'));
console.log(`bundled the CLI into ${outputs.length} files in ${path.relative(root, BUNDLE_DIR)}/`);
