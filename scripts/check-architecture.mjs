#!/usr/bin/env node
// Fails (exit 1) on an import cycle in src/, an import across the layers DESIGN 5.1 draws (core imports nothing
// else, the CLI never reaches the state store, engines and servers never reach the CLI, and so on), or a heavy package
// loaded at the CLI's start. Type-only imports are not edges (they vanish at run time). madge would do the cycle
// half, but it needs TypeScript 5's compiler API.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(process.argv[2] ?? 'src');

/** Which top-level folders of src/ each layer may import from (its own always allowed). */
const ALLOWED = {
  core: [],
  config: ['core'],
  ffmpeg: ['core'],
  service: ['core'],
  // The render farm (issue 11): the media store knows nothing of jobs; a segment task is rendered from the store
  // with ffmpeg and never touches the state store, so workers on other machines need nothing else.
  media: ['core'],
  cluster: ['core', 'ffmpeg', 'media'],
  engine: ['core', 'config', 'ffmpeg', 'service', 'media', 'cluster'],
  remote: ['core', 'config', 'service'],
  server: ['core', 'engine', 'service', 'media'],
  cli: ['core', 'config', 'engine', 'ffmpeg', 'remote', 'server', 'service', 'media', 'cluster'],
};
/** Files no other layer may import, whatever the folder rules say. */
const PRIVATE = { 'engine/store.ts': ['engine'] };
/**
 * Packages that cost a cold CLI tens of milliseconds each to load, for commands that rarely need them: nothing the CLI
 * loads at start (cli/main.ts and its static imports) may import them; only a dynamic import() inside the command
 * that uses them. `wmark watermark --no-wait` has a 1 s budget from spawn to a playable playlist (issue 12).
 */
const HEAVY = ['bullmq', 'ioredis', '@aws-sdk/client-s3', 'jose', 'playwright-core', 'ora', '@inquirer/prompts'];
const ENTRY = 'cli/main.ts';

const files = [];
(function walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full);
    else if (entry.name.endsWith('.ts')) files.push(full);
  }
})(root);

const IMPORT = /^\s*(import|export)\s+(type\s+)?([^'";]*?\sfrom\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm;
const PACKAGE_IMPORT = /^\s*(import|export)\s+(type\s+)?([^'";]*?\sfrom\s+)?['"]((?:@[\w.-]+\/)?[\w.-]+)(?:\/[^'"]*)?['"]/gm;
const edges = new Map();
const heavyImports = new Map();
const problems = [];
const layerOf = (file) => path.relative(root, file).split(path.sep)[0].replace(/\.ts$/, '');

for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const targets = new Set();
  for (const m of text.matchAll(IMPORT)) {
    const typeOnly = Boolean(m[2]) || /^\s*\{\s*(type\s+[\w$]+\s*,?\s*)+\}\s+from\s+$/.test(m[3] ?? '');
    const target = path.resolve(path.dirname(file), m[4]).replace(/\.js$/, '.ts');
    const from = layerOf(file);
    const to = layerOf(target);
    const rel = path.relative(root, target).split(path.sep).join('/');
    // Files at the top of src/ (version.ts) are shared by every layer.
    if (from !== to && ALLOWED[from] && ALLOWED[to] && !ALLOWED[from].includes(to)) problems.push(`layer: ${path.relative(root, file)} (${from}) imports ${rel} (${to})`);
    if (PRIVATE[rel] && !PRIVATE[rel].includes(from) && !typeOnly) problems.push(`layer: ${path.relative(root, file)} imports ${rel}, which only ${PRIVATE[rel].join(', ')} may use`);
    if (!typeOnly) targets.add(target);
  }
  edges.set(file, targets);
  const heavy = [...text.matchAll(PACKAGE_IMPORT)].filter((m) => !m[2] && HEAVY.includes(m[4])).map((m) => m[4]);
  if (heavy.length) heavyImports.set(file, heavy);
}

// Every file the CLI loads at start, and the first chain that reaches each: a heavy package loaded there is named with it.
const entry = path.join(root, ENTRY);
if (edges.has(entry)) {
  const via = new Map([[entry, [entry]]]);
  const queue = [entry];
  while (queue.length) {
    const file = queue.shift();
    for (const pkg of heavyImports.get(file) ?? []) {
      problems.push(`startup: ${via.get(file).map((f) => path.relative(root, f)).join(' -> ')} imports ${pkg} (load it with import() where it is used)`);
    }
    for (const next of edges.get(file) ?? []) {
      if (edges.has(next) && !via.has(next)) {
        via.set(next, [...via.get(file), next]);
        queue.push(next);
      }
    }
  }
}

// Depth-first search; a back edge to a file still on the stack closes a cycle.
const state = new Map();
const stack = [];
const cycles = [];
function visit(file) {
  state.set(file, 'open');
  stack.push(file);
  for (const next of edges.get(file) ?? []) {
    if (!edges.has(next)) continue;
    if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
    else if (!state.has(next)) visit(next);
  }
  stack.pop();
  state.set(file, 'done');
}
for (const file of files) if (!state.has(file)) visit(file);
for (const cycle of cycles) problems.push(`cycle: ${cycle.map((f) => path.relative(root, f)).join(' -> ')}`);

if (problems.length) {
  for (const p of problems) console.log(p);
  console.log(`${problems.length} architecture problem(s) in ${files.length} files`);
  process.exit(1);
}
console.log(`no import cycles or layer crossings in ${files.length} files`);
