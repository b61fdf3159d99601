#!/usr/bin/env node
// Fails (exit 1) on what would blur the architecture docs/architecture.md draws:
// - an import cycle in src/, type-only imports included (a type cycle still ties two modules' meaning together);
// - folders of src/ that import each other round, even with no file cycle (a folder: a directory under src/, its own
//   files only; a file at the top of src/ stands alone);
// - an import across the layers (core imports nothing else, the farm and the server sit on the engine, the engine
//   never reaches the farm, the CLI or the server, and so on);
// - an import from engine/jobs/ of anything but core, the state store's interface and the data folder: the queues and
//   leases know no kind of job (with import() as with import);
// - an import of a folder's private modules from outside it (the state store is the engine's alone; the server and the
//   CLI reach the engine only through its application layer, engine/app/, with import() as with import);
// - a property access that reaches through the application layer to the engine behind it (`service.engine`), or, in
//   the CLI and the library, into an engine they hold (`engine.store`): to them an engine is a handle;
// - a heavy package, or a heavy part of wmark (the engine, the state stores, the ffmpeg runners, the server), loaded at
//   the CLI's start;
// - a file over 400 lines, in src/, bench/, harness/ and scripts/;
// - a read of the wall clock (`Date.now()`, `new Date()` with no argument) in core/, the engine, media/, ffmpeg/ or the
//   farm: core is pure, and the others read time only through the clock they are given (`engine.now`, or a `now`
//   handed to a runner, store or worker when it is made); the edges (cli/, library/, server/) may read the wall clock;
// - a process started anywhere but the one runner (ffmpeg/run-ffmpeg.ts, with its watchdog) and the few files listed;
// - and, beside src/, an import between test/ and bench/ (either way), or from harness/ into either or of vitest: the
//   processes and fixtures both start live in harness/, and each keeps its own tests and suites to itself.
//
//   node scripts/check-architecture.mjs               src/ and the folders beside it, from the repository's root
//   node scripts/check-architecture.mjs SRC           one src/ tree only
//   node scripts/check-architecture.mjs --repo ROOT   ROOT/src and the folders beside it
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const repoArg = process.argv[2] === '--repo' ? process.argv[3] : process.argv[2] === undefined ? '.' : undefined;
const repo = repoArg === undefined ? undefined : path.resolve(repoArg);
const root = repo ? path.join(repo, 'src') : path.resolve(process.argv[2]);

/** Which top-level folders of src/ each layer may import from (its own always allowed). */
const ALLOWED = {
  core: [],
  config: ['core'],
  ffmpeg: ['core'],
  service: ['core'],
  // Media stores know nothing of jobs or records: workers on other machines use them with ffmpeg alone.
  media: ['core'],
  engine: ['core', 'config', 'ffmpeg', 'service', 'media'],
  // The render farm implements the engine's strategies (renders, ingests) and runs their tasks on workers.
  farm: ['core', 'ffmpeg', 'media', 'engine'],
  remote: ['core', 'config', 'service'],
  server: ['core', 'engine', 'service', 'media'],
  cli: ['core', 'config', 'engine', 'ffmpeg', 'remote', 'server', 'service', 'media', 'farm'],
  // The library a program imports: the same two services as the CLI, with no command line around them.
  library: ['core', 'config', 'engine', 'remote', 'service'],
};
/**
 * Folders (or files) of src/ that only the listed layers may import, whatever the folder rules say, but for the files
 * named public (the state store's interface and records are the engine's vocabulary; its implementations are not).
 */
const PRIVATE = { 'engine/state/': { layers: ['engine'], public: ['engine/state/state-store.ts'] } };
/**
 * Folders that sit beneath the engine's others and may import only what is listed (their own files, core and the
 * files or folders named), with import() as with import: the queues and leases of engine/jobs/ run jobs they are
 * handed, so they name no kind of job and nothing of the application layer that dispatches them.
 */
const BENEATH = { 'engine/jobs/': ['core/', 'engine/state/state-store.ts', 'engine/data-folder/'] };
/** Layers that may import another layer only through one of its folders (with import() too). */
const GATEWAYS = { server: { engine: 'engine/app/' }, cli: { engine: 'engine/app/' } };
/** Property access that reaches through the application layer, in the layers that sit on it. */
const REACH_THROUGH = { pattern: /\bservice\s*(?:\?\.|\.)\s*engine\b/, layers: ['server', 'cli', 'library'] };
/**
 * To a front end an engine is a handle: it opens one and hands it to the application layer, and closes it. A member
 * read on it (`engine.store`, `engine.paths`, `engine.runner`) is the engine's inside, reached around that layer.
 */
const ENGINE_HANDLE = { pattern: /(?<!\.\s*)\bengine\s*(?:\?\.|\.)\s*(?!close\b|then\b|catch\b)[A-Za-z_$]/, layers: ['cli', 'library'] };
/**
 * Packages that cost a cold CLI tens of milliseconds each to load, for commands that rarely need them: nothing the CLI
 * loads at start (cli/main.ts and its static imports) may import them; only a dynamic import() inside the command
 * that uses them. `wmark watermark --no-wait` has a 1 s budget from spawn to a playable playlist.
 */
const HEAVY = [
  'bullmq',
  'ioredis',
  '@aws-sdk/client-s3',
  'jose',
  'playwright-core',
  'ora',
  '@inquirer/prompts',
  'kysely',
  'pg',
  'prom-client',
  'better-sqlite3',
  // Schemas, config loaders and the CSV parser: each one bundled is still hundreds of kB to evaluate at every start.
  'zod',
  'cosmiconfig',
  'js-yaml',
  'csv-parse',
];
/**
 * wmark's own heavy parts (files, or folders ending in '/'), under the same rule: the engine and what opens it, the
 * state stores, the ffmpeg runners, the HTTP server and the render farm. `--version`, `--help` and a command's
 * registration load none of them; the command that runs them imports them with import().
 */
const HEAVY_MODULES = [
  'engine/open/',
  'engine/app/configured-engine.ts',
  'engine/app/local-service.ts',
  'engine/app/server-service.ts',
  'engine/app/installation-checks.ts',
  'engine/state/',
  'ffmpeg/run-ffmpeg.ts',
  'ffmpeg/transcode-segments.ts',
  'server/',
  'farm/farm-',
];
const ENTRY = 'cli/main.ts';
/** A file longer than this is usually doing two jobs: split it along its seams. */
const MAX_LINES = 400;
/**
 * Layers that never read the wall clock themselves: core is pure, and the engine, the media stores, the process runner
 * and the render farm read the clock they were given (`engine.now`; a runner, store or worker takes a `now` when it is
 * made), so tests set it and every reading agrees. `Date.now` passed as a value (the default clock where one is
 * injected) is no reading. The edges that start a run are not held to it: the CLI, the library a program imports and
 * the HTTP server (cli/, library/, server/) may read the wall clock, and hand it on.
 */
const CLOCKLESS = ['core', 'engine', 'media', 'ffmpeg', 'farm'];
/**
 * The files of src/ that may start processes (import node:child_process), each with why. Everything else runs its
 * processes through the runner, so each is cancelled with its job, stopped when it stalls and killed if wmark dies.
 */
const PROCESS_STARTERS = {
  'ffmpeg/run-ffmpeg.ts': 'the runner',
  'ffmpeg/child-watchdog.ts': "the runner's watchdog, which kills the runner's children if wmark dies",
  'engine/jobs/detached-job-queue.ts': "--no-wait's `wmark job run`, which must outlive the command that started it",
  'cli/open-link.ts': 'the browser `--open` starts, which must outlive wmark',
};
const CHILD_PROCESS =
  /^\s*import\s[^;]*?from\s+['"](?:node:)?child_process['"]|\brequire\(\s*['"](?:node:)?child_process['"]\s*\)|\bimport\(\s*['"](?:node:)?child_process['"]\s*\)/m;
const CLOCK_READ = /\bDate\.now\s*\(\s*\)|\bnew\s+Date\s*\(\s*\)|\bperformance\.now\s*\(\s*\)/;

/**
 * Top-level folders beside src/ and those each may not import: tests and benchmarks meet only in harness/, which
 * imports neither (nor the test runner: a bench runs without it).
 */
const FENCES = { test: ['bench'], bench: ['test'], harness: ['test', 'bench'], scripts: [] };
const FENCED_PACKAGES = { harness: ['vitest'] };
/** Folders beside src/ held to MAX_LINES too. */
const SIZED = ['bench', 'harness', 'scripts'];

/** The .ts (and .mts/.mjs, with `all`) files under `dir`, leaving out generated output. */
function sources(dir, all = false) {
  const found = [];
  (function walk(d) {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) {
        if (!['node_modules', 'out', 'dist'].includes(entry.name)) walk(full);
      } else if (entry.name.endsWith('.ts') || (all && /\.m[jt]s$/.test(entry.name))) found.push(full);
    }
  })(dir);
  return found;
}
const files = sources(root);

const IMPORT = /^\s*(import|export)\s+(type\s+)?([^'";]*?\sfrom\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;
const PACKAGE_IMPORT = /^\s*(import|export)\s+(type\s+)?([^'";]*?\sfrom\s+)?['"]((?:@[\w.-]+\/)?[\w.-]+)(?:\/[^'"]*)?['"]/gm;
/** Every import edge, type-only ones included: for cycles. */
const edges = new Map();
/** Edges that exist at run time: for what the CLI loads at start. */
const runtimeEdges = new Map();
const heavyImports = new Map();
const problems = [];
const layerOf = (file) => path.relative(root, file).split(path.sep)[0].replace(/\.ts$/, '');
const relOf = (file) => path.relative(root, file).split(path.sep).join('/');
/** A file's lines with comments blanked (a line comment, a block comment's lines, a trailing `// ...`), numbered as the file's. */
const codeLines = (text) => text.split('\n').map((line) => line.replace(/^\s*(\/\/|\/?\*).*$/, '').replace(/\s\/\/\s.*$/, ''));

for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  if (lines > MAX_LINES) problems.push(`size: ${relOf(file)} has ${lines} lines (at most ${MAX_LINES}); split it along its seams`);
  const all = new Set();
  const runtime = new Set();
  const from = layerOf(file);
  const fromRel = relOf(file);
  // Static imports (type-only ones flagged), then import(): a module loaded later crosses the layers all the same.
  const imports = [
    ...[...text.matchAll(IMPORT)].map((m) => ({
      specifier: m[4],
      typeOnly: Boolean(m[2]) || /^\s*\{\s*(type\s+[\w$]+\s*,?\s*)+\}\s+from\s+$/.test(m[3] ?? ''),
    })),
    ...[...text.matchAll(DYNAMIC)].map((m) => ({ specifier: m[1], dynamic: true })),
  ];
  for (const { specifier, typeOnly, dynamic } of imports) {
    const target = path.resolve(path.dirname(file), specifier).replace(/\.js$/, '.ts');
    const to = layerOf(target);
    const rel = relOf(target);
    // Files at the top of src/ (version.ts) are shared by every layer.
    if (from !== to && ALLOWED[from] && ALLOWED[to] && !ALLOWED[from].includes(to)) problems.push(`layer: ${fromRel} (${from}) imports ${rel} (${to})`);
    for (const [prefix, rule] of Object.entries(PRIVATE)) {
      if (rel.startsWith(prefix) && !rule.public.includes(rel) && !fromRel.startsWith(prefix) && !rule.layers.includes(from)) {
        problems.push(`layer: ${fromRel} imports ${rel}, which only ${rule.layers.join(', ')} may use`);
      }
    }
    for (const [folder, allowed] of Object.entries(BENEATH)) {
      const shared = !rel.includes('/'); // a file at the top of src/, shared by every layer
      if (fromRel.startsWith(folder) && !shared && !rel.startsWith(folder) && !allowed.some((a) => rel.startsWith(a)) && target.startsWith(root)) {
        problems.push(`beneath: ${fromRel} imports ${rel}; ${folder} imports only ${[folder, ...allowed].join(', ')}`);
      }
    }
    const gateway = GATEWAYS[from]?.[to];
    if (gateway && !rel.startsWith(gateway)) problems.push(`layer: ${fromRel} (${from}) imports ${rel}; ${from} reaches ${to} only through ${gateway}`);
    if (dynamic) continue;
    all.add(target);
    if (!typeOnly) runtime.add(target);
  }
  if (CHILD_PROCESS.test(text) && !(fromRel in PROCESS_STARTERS))
    problems.push(`process: ${fromRel} starts processes itself (run them through ffmpeg/run-ffmpeg.ts, whose watchdog stops and kills them)`);
  if (CLOCKLESS.includes(from)) {
    // Comments may name the clock they are not reading.
    codeLines(text).forEach((code, i) => {
      if (CLOCK_READ.test(code)) problems.push(`clock: ${fromRel}:${i + 1} reads the wall clock (use the engine's \`now\`, or take a \`now\` at construction)`);
    });
  }
  if (ENGINE_HANDLE.layers.includes(from)) {
    // Strings are no reads either (a module's path names `configured-engine.js`).
    codeLines(text).forEach((code, i) => {
      if (ENGINE_HANDLE.pattern.test(code.replace(/'[^']*'|"[^"]*"/g, "''")))
        problems.push(`reach: ${fromRel}:${i + 1} reads inside the engine, which ${from} holds as a handle (ask engine/app/ instead)`);
    });
  }
  if (REACH_THROUGH.layers.includes(from)) {
    text.split('\n').forEach((line, i) => {
      if (REACH_THROUGH.pattern.test(line))
        problems.push(`reach: ${fromRel}:${i + 1} reaches through the service to its engine (give the service a method instead)`);
    });
  }
  edges.set(file, all);
  runtimeEdges.set(file, runtime);
  const heavy = [...text.matchAll(PACKAGE_IMPORT)].filter((m) => !m[2] && HEAVY.includes(m[4])).map((m) => m[4]);
  if (heavy.length) heavyImports.set(file, heavy);
}

// The fences between the folders beside src/: static imports, export-froms and import() alike.
let fencedFiles = 0;
if (repo) {
  for (const [folder, refused] of Object.entries(FENCES)) {
    if (!existsSync(path.join(repo, folder))) continue;
    for (const file of sources(path.join(repo, folder), true)) {
      fencedFiles++;
      const text = readFileSync(file, 'utf8');
      const fromRel = path.relative(repo, file).split(path.sep).join('/');
      const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
      if (SIZED.includes(folder) && lines > MAX_LINES) problems.push(`size: ${fromRel} has ${lines} lines (at most ${MAX_LINES}); split it along its seams`);
      const specifiers = [...[...text.matchAll(IMPORT)].map((m) => m[4]), ...[...text.matchAll(DYNAMIC)].map((m) => m[1])];
      for (const specifier of specifiers) {
        const rel = path
          .relative(repo, path.resolve(path.dirname(file), specifier))
          .split(path.sep)
          .join('/');
        const to = rel.split('/')[0];
        if (refused.includes(to))
          problems.push(`fence: ${fromRel} imports ${rel.replace(/\.js$/, '.ts')}; ${folder}/ may not import ${to}/ (share it through harness/)`);
      }
      for (const m of text.matchAll(PACKAGE_IMPORT)) {
        if (FENCED_PACKAGES[folder]?.includes(m[4])) problems.push(`fence: ${fromRel} imports ${m[4]}; ${folder}/ runs without it`);
      }
    }
  }
}

// Every file the CLI loads at start, and the first chain that reaches each: a heavy package loaded there is named with
// it, and so is a heavy module of wmark's own (what lies behind that one is not followed: moving it behind import()
// takes all of it off the start).
const entry = path.join(root, ENTRY);
if (runtimeEdges.has(entry)) {
  const via = new Map([[entry, [entry]]]);
  const queue = [entry];
  const chain = (file) =>
    via
      .get(file)
      .map((f) => path.relative(root, f).split(path.sep).join('/'))
      .join(' -> ');
  while (queue.length) {
    const file = queue.shift();
    if (file !== entry && HEAVY_MODULES.some((m) => relOf(file).startsWith(m))) {
      problems.push(`startup: ${chain(file)} is a heavy part loaded at start (load it with import() where it is used)`);
      continue;
    }
    for (const pkg of heavyImports.get(file) ?? []) {
      problems.push(`startup: ${chain(file)} imports ${pkg} (load it with import() where it is used)`);
    }
    for (const next of runtimeEdges.get(file) ?? []) {
      if (runtimeEdges.has(next) && !via.has(next)) {
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

// Loops between folders: the strongly connected groups of the folder graph (type-only imports count, as for files).
const folderOf = (file) => {
  const dir = path.relative(root, path.dirname(file)).split(path.sep).join('/');
  return dir === '' ? relOf(file) : dir;
};
/** folder -> folder it imports -> one import that makes the edge, to name it. */
const folderEdges = new Map();
for (const [file, targets] of edges) {
  for (const target of targets) {
    const [a, b] = [folderOf(file), folderOf(target)];
    if (a === b || !edges.has(target)) continue;
    if (!folderEdges.has(a)) folderEdges.set(a, new Map());
    if (!folderEdges.get(a).has(b)) folderEdges.get(a).set(b, `${relOf(file)} -> ${relOf(target)}`);
  }
}
const folderLoops = stronglyConnected(folderEdges).filter((group) => group.length > 1);
const loopName = (group) => [...group].sort().join(', ');
for (const group of folderLoops) {
  const hops = group.flatMap((a) => group.filter((b) => folderEdges.get(a)?.has(b)).map((b) => folderEdges.get(a).get(b)));
  problems.push(`folder loop: ${loopName(group)} import each other round (${hops.sort().join('; ')}); move the piece to where it belongs`);
}

/** Tarjan's strongly connected components of a graph given as node -> Map(next -> anything). */
function stronglyConnected(graph) {
  const index = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const groups = [];
  const nodes = new Set([...graph.keys(), ...[...graph.values()].flatMap((next) => [...next.keys()])]);
  const connect = (v) => {
    index.set(v, index.size);
    low.set(v, index.get(v));
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) !== index.get(v)) return;
    const group = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    groups.push(group);
  };
  for (const v of nodes) if (!index.has(v)) connect(v);
  return groups;
}

if (problems.length) {
  for (const p of problems) console.log(p);
  console.log(`${problems.length} architecture problem(s) in ${files.length + fencedFiles} files`);
  process.exit(1);
}
console.log(`no import cycles or layer crossings in ${files.length} files`);
console.log('no folder loops');
if (repo) console.log(`no import between test/ and bench/, nor from harness/ into either, in ${fencedFiles} files`);
