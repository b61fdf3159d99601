#!/usr/bin/env node
// Fails (exit 1) on an import cycle in src/ or an import across the layers DESIGN 5.1 draws: core imports nothing
// else, the CLI never reaches the state store, engines and servers never reach the CLI, and so on. Type-only imports
// are not edges (they vanish at run time). madge would do the cycle half, but it needs TypeScript 5's compiler API.
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

const files = [];
(function walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full);
    else if (entry.name.endsWith('.ts')) files.push(full);
  }
})(root);

const IMPORT = /^\s*(import|export)\s+(type\s+)?([^'";]*?\sfrom\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm;
const edges = new Map();
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
