#!/usr/bin/env node
// The wmark binary: runs the bundled CLI (dist/bundle/, the quickest to start), else tsc's compiled CLI (dist/cli/),
// else the TypeScript sources through tsx in a fresh checkout. The only place that calls process.exit.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const bundled = new URL('../dist/bundle/wmark.js', import.meta.url);
const compiled = new URL('../dist/cli/main.js', import.meta.url);
let entry;
if (existsSync(bundled)) {
  entry = bundled.href;
} else if (existsSync(compiled)) {
  entry = compiled.href;
} else {
  // tsx is a devDependency: only a checkout has it. An install always ships dist/.
  let register;
  try {
    ({ register } = await import('tsx/esm/api'));
  } catch {
    process.stderr.write(`wmark: ${fileURLToPath(compiled)} is missing: run \`npm run build\` in ${fileURLToPath(new URL('..', import.meta.url))}\n`);
    process.exit(1);
  }
  register();
  entry = new URL('../src/cli/main.ts', import.meta.url).href;
}
const { main } = await import(entry);
// A second SIGINT or SIGTERM leaves at once, whatever the first one is still waiting for.
const code = await main(process.argv.slice(2), (now) => process.exit(now));
// Let stdout drain before exiting so piped output is never cut short.
process.stdout.write('', () => process.exit(code));
