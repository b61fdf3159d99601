#!/usr/bin/env node
// The wmark binary: runs the bundled CLI (dist/bundle/, the quickest to start), else tsc's compiled CLI (dist/cli/),
// else the TypeScript sources through tsx in a fresh checkout. The only place that calls process.exit.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const argv = process.argv.slice(2);
// `wmark --version` alone is answered from the manifest before any of the CLI loads, since loading the CLI is most
// of what the answer costs. With any other argument the CLI answers, and its --version prints the same line.
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(`${version}\n`, () => process.exit(0));
} else {
  const { main } = await import(await cliEntry());
  // A second SIGINT or SIGTERM leaves at once, whatever the first one is still waiting for.
  const code = await main(argv, (now) => process.exit(now));
  // Let stdout drain before exiting so piped output is never cut short.
  process.stdout.write('', () => process.exit(code));
}

/** The CLI's entry module: the bundle, else tsc's output, else the sources through tsx. */
async function cliEntry() {
  const bundled = new URL('../dist/bundle/wmark.js', import.meta.url);
  const compiled = new URL('../dist/cli/main.js', import.meta.url);
  if (existsSync(bundled)) return bundled.href;
  if (existsSync(compiled)) return compiled.href;
  // tsx is a devDependency: only a checkout has it. An install always ships dist/.
  let register;
  try {
    ({ register } = await import('tsx/esm/api'));
  } catch {
    process.stderr.write(`wmark: ${fileURLToPath(compiled)} is missing: run \`npm run build\` in ${fileURLToPath(new URL('..', import.meta.url))}\n`);
    process.exit(1);
  }
  register();
  return new URL('../src/cli/main.ts', import.meta.url).href;
}
