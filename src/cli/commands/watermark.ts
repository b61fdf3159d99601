// `wmark watermark`: create a watermark from flags, a settings file, a template + mappings, or a batch of mappings.
import { spawn } from 'node:child_process';
import { openSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Option, type Command } from 'commander';
import type { ChalkInstance } from 'chalk';
import { WmarkError, validationError } from '../../core/errors.js';
import { parseExpirationInput } from '../../core/expiration.js';
import { parseBatch } from '../../core/parse-batch.js';
import { renderTemplate } from '../../core/render-template.js';
import { parseSettings } from '../../core/setting-schema.js';
import type { ApiVersion } from '../../core/api-version.js';
import type { Setting, TemplateSetting } from '../../core/setting-types.js';
import type { Engine } from '../../engine/engine.js';
import type { Container } from '../../engine/store.js';
import { getTemplate } from '../../engine/templates.js';
import { exportWatermark, requestWatermark, runWatermarkJob, type VideoRef } from '../../engine/watermark.js';
import { watermarkView, type WatermarkView } from '../../engine/watermark-view.js';
import type { CliContext } from '../context.js';
import { action } from '../program.js';
import { readJsonInput, readTextInput } from '../read-input.js';
import { parseForensicPayload } from '../forensic-flag.js';
import { addRemoteOptions } from './remote-common.js';
import { remoteWatermark, type RemoteWatermarkOptions } from './remote-watermark.js';

interface WatermarkOptions {
  key?: string;
  videoId?: string;
  text?: string;
  x?: number;
  y?: number;
  fontSize?: number;
  fontColor?: string;
  fontOpacity?: number;
  align?: string;
  verticalAlign?: string;
  shadowColor?: string;
  shadowOpacity?: number;
  shadowOffsetX?: number;
  shadowOffsetY?: number;
  moveToX?: number;
  moveToY?: number;
  moveStart?: number;
  moveEnd?: number;
  settings?: string;
  forensic?: string;
  template?: string;
  map?: string[];
  batch?: string;
  containers: string;
  expiration?: string;
  wait: boolean;
  out?: string;
  api: ApiVersion;
  publicUrl?: string;
}

const number = (flag: string) => (value: string) => {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new WmarkError('BAD_FLAG', `${flag}: expected a number, got "${value}"`);
  return n;
};

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function registerWatermark(program: Command): void {
  program
    .command('watermark')
    .description('watermark an ingested video (local engine, or a remote service with --remote)')
    .option('--key <key>', 'the video, by the key given at ingest')
    .option('--video-id <id>', 'the video, by id')
    .option('--text <text>', 'text of a single TEXT setting (drawn literally)')
    .option('--x <fraction>', 'anchor x as a fraction of the width (default 0.5)', number('--x'))
    .option('--y <fraction>', 'anchor y as a fraction of the height (default 0.5)', number('--y'))
    .option('--font-size <fraction>', 'text height as a fraction of the frame height (default 0.05)', number('--font-size'))
    .option('--font-color <RRGGBB>', 'text colour (default FFFFFF)')
    .option('--font-opacity <0..1>', 'text opacity (default 0.3)', number('--font-opacity'))
    .option('--align <LEFT|CENTER|RIGHT>', 'which edge of the text sits at x (default CENTER)')
    .option('--vertical-align <TOP|MIDDLE|BOTTOM>', 'which edge of the text sits at y (default MIDDLE)')
    .option('--shadow-color <RRGGBB>', 'shadow colour (default 000000)')
    .option('--shadow-opacity <0..1>', 'shadow opacity (default 0.1)', number('--shadow-opacity'))
    .option('--shadow-offset-x <fraction>', 'shadow offset as a fraction of the font size (default 0.08)', number('--shadow-offset-x'))
    .option('--shadow-offset-y <fraction>', 'shadow offset as a fraction of the font size (default 0.08)', number('--shadow-offset-y'))
    .option('--move-to-x <fraction>', 'MOVE animation: end x', number('--move-to-x'))
    .option('--move-to-y <fraction>', 'MOVE animation: end y', number('--move-to-y'))
    .option('--move-start <seconds>', 'MOVE animation: start time on the video timeline', number('--move-start'))
    .option('--move-end <seconds>', 'MOVE animation: end time on the video timeline', number('--move-end'))
    .option('--forensic <payload>', 'invisible FORENSIC mark: 16-bit payload as 0..65535, 2 ASCII chars or base64 of 2 bytes (video ingested with --forensic)')
    .option('--settings <file>', 'JSON array of setting objects (SPEC 2.2); - reads stdin')
    .option('--template <id>', 'settings template to render')
    .option('--map <name=value>', 'placeholder value for --template (repeatable)', collect)
    .option('--batch <file>', 'with --template: CSV (header = placeholder names) or NDJSON of mappings, one watermark per row')
    .option('--containers <list>', 'outputs: m3u8, mp4 or both', 'm3u8,mp4')
    .option('--expiration <when>', 'Unix seconds, an ISO date, or a duration such as 7d (only when the watermark is created)')
    .option('--no-wait', 'return as soon as the playlist is playable; rendering continues in the background')
    .option('--out <dir>', 'also copy each finished HLS folder and mp4 to <dir>/<watermark id>/')
    .addOption(new Option('--api <version>', 'URL shapes to print (as `wmark serve` serves them); with --remote, the API version to call (default there: 2.0 when the service has it, else 1.0)').choices(['1.0', '2.0']).default('2.0'))
    .option('--public-url <url>', 'base URL the printed links use (default: config publicUrl or http://127.0.0.1:8080)')
    .option('--wait', 'remote: poll until READY (1.0) and print the final state')
    .option('--interval <duration>', 'remote --wait: time between polls (default 3s)')
    .option('--concurrency <n>', 'remote --batch: requests in flight at once (default 4)')
    .action(action((ctx, opts: RemoteWatermarkOptions, cmd: Command) => (opts.remote !== undefined ? remoteWatermark(ctx, opts, cmd) : watermarkAction(ctx, opts))));
  addRemoteOptions(program.commands.find((c) => c.name() === 'watermark')!, { api: false });

  program
    .command('job', { hidden: true })
    .description('internal: run a queued watermark job to completion')
    .command('run')
    .argument('<watermark-id>')
    .action(
      action(async (ctx, id: string) => {
        const engine = await ctx.openEngine();
        await runWatermarkJob(engine, id, {}, ctx.signal);
      }),
    );
}

export function parseContainers(list: string): Container[] {
  const items = list.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  const bad = items.filter((c) => c !== 'm3u8' && c !== 'mp4');
  if (bad.length || !items.length) throw new WmarkError('BAD_CONTAINERS', `--containers: expected m3u8, mp4 or m3u8,mp4, got "${list}"`);
  return [...new Set(items)] as Container[];
}

export function parseMaps(maps: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of maps ?? []) {
    const eq = m.indexOf('=');
    if (eq <= 0) throw new WmarkError('BAD_MAP', `--map: expected name=value, got "${m}"`);
    const name = m.slice(0, eq);
    if (name in out) throw new WmarkError('BAD_MAP', `--map: "${name}" is given twice`);
    out[name] = m.slice(eq + 1);
  }
  return out;
}

const SETTING_FLAGS: [keyof WatermarkOptions, string][] = [
  ['text', 'content'], ['x', 'x'], ['y', 'y'], ['fontSize', 'fontSize'], ['fontColor', 'fontColor'], ['fontOpacity', 'fontOpacity'],
  ['align', 'align'], ['verticalAlign', 'verticalAlign'], ['shadowColor', 'shadowColor'], ['shadowOpacity', 'shadowOpacity'],
  ['shadowOffsetX', 'shadowOffsetX'], ['shadowOffsetY', 'shadowOffsetY'],
];

/** A single TEXT setting object from the flags, in SPEC 2.2 shape, so it is validated exactly like an API request. */
export function settingFromFlags(opts: WatermarkOptions): Record<string, unknown> | undefined {
  const setting: Record<string, unknown> = {};
  for (const [flag, field] of SETTING_FLAGS) if (opts[flag] !== undefined) setting[field] = opts[flag];
  const move = [opts.moveToX, opts.moveToY, opts.moveStart, opts.moveEnd];
  if (move.some((v) => v !== undefined)) {
    setting.animation = {
      type: 'MOVE',
      ...(opts.moveToX !== undefined ? { toX: opts.moveToX } : {}),
      ...(opts.moveToY !== undefined ? { toY: opts.moveToY } : {}),
      ...(opts.moveStart !== undefined ? { startTime: opts.moveStart } : {}),
      ...(opts.moveEnd !== undefined ? { endTime: opts.moveEnd } : {}),
    };
  }
  return Object.keys(setting).length ? setting : undefined;
}

const FLAG_NAMES: Record<string, string> = {
  content: '--text', fontSize: '--font-size', fontColor: '--font-color', fontOpacity: '--font-opacity', verticalAlign: '--vertical-align',
  shadowColor: '--shadow-color', shadowOpacity: '--shadow-opacity', shadowOffsetX: '--shadow-offset-x', shadowOffsetY: '--shadow-offset-y',
  'animation.toX': '--move-to-x', 'animation.toY': '--move-to-y', 'animation.startTime': '--move-start', 'animation.endTime': '--move-end',
};

/** Validation issues about flags name the flag the user typed, not the setting field behind it. */
export function flagIssue(issue: string): string {
  return issue.replace(/^flags\[0\]\.([\w.]+)/, (_, field: string) => FLAG_NAMES[field] ?? `--${field}`);
}

/** Adds the --forensic payload as a FORENSIC setting (replacing one the settings file may already carry). */
function withForensic(settings: Setting[], payload: string | undefined): Setting[] {
  if (payload === undefined) return settings;
  return [...settings.filter((s) => s.type !== 'FORENSIC'), { type: 'FORENSIC', payload: parseForensicPayload(payload) }];
}

type SettingsSource = { kind: 'settings'; settings: Setting[] } | { kind: 'template'; template: TemplateSetting[]; templateId: string };

async function settingsSource(ctx: CliContext, engine: Engine, opts: WatermarkOptions): Promise<SettingsSource> {
  const fromFlags = settingFromFlags(opts);
  const sources = [fromFlags && 'setting flags (--text, --x, ...)', opts.settings && '--settings', opts.template && '--template'].filter(Boolean);
  // A forensic mark alone is a complete watermark: nothing visible to draw.
  if (sources.length === 0 && opts.forensic !== undefined) return { kind: 'settings', settings: [] };
  if (sources.length === 0) throw new WmarkError('SETTINGS_REQUIRED', 'say what to draw: --text (with setting flags), --settings FILE, or --template ID with --map', { hint: 'e.g. wmark watermark --key KEY --text "for alice@example.com"' });
  if (sources.length > 1) throw new WmarkError('SETTINGS_CONFLICT', `use only one of ${sources.join(', ')}`);
  if (fromFlags && fromFlags.content === undefined) throw new WmarkError('TEXT_REQUIRED', 'setting flags need --text');
  if (opts.template) return { kind: 'template', template: getTemplate(engine, opts.template).settings as TemplateSetting[], templateId: opts.template };
  const raw = opts.settings ? await readJsonInput(ctx.io, opts.settings) : [fromFlags];
  const parsed = parseSettings(raw, { apiVersion: opts.api, path: opts.settings ? 'settings' : 'flags' });
  if (!parsed.ok) throw validationError('SETTINGS_INVALID', opts.settings ? parsed.issues : parsed.issues.map(flagIssue));
  return { kind: 'settings', settings: parsed.value };
}

function render(source: Extract<SettingsSource, { kind: 'template' }>, mappings: Record<string, string>, api: ApiVersion, where: string): Setting[] {
  const rendered = renderTemplate(source.template, mappings, api, { mappingsPath: where });
  if (!rendered.ok) throw validationError('TEMPLATE_MAPPING_INVALID', rendered.issues);
  return rendered.value;
}

/** Finds the CLI entry to start a detached background worker with (compiled build or TypeScript sources). */
function workerCommand(): string[] {
  const bin = fileURLToPath(new URL('../../../bin/wmark.js', import.meta.url));
  return [process.execPath, bin];
}

function startBackgroundJob(engine: Engine, ctx: CliContext, id: string): void {
  const logs = path.join(engine.paths.root, 'logs');
  mkdirSync(logs, { recursive: true });
  const log = openSync(path.join(logs, `job-${id}.log`), 'a');
  const [cmd, ...args] = workerCommand();
  const child = spawn(cmd!, [...args, '--data-dir', engine.paths.root, ...(ctx.flags.config ? ['--config', ctx.flags.config] : []), 'job', 'run', id], {
    detached: true,
    stdio: ['ignore', log, log],
    env: { ...ctx.io.env } as NodeJS.ProcessEnv,
    cwd: ctx.io.cwd,
  });
  child.unref();
}

async function produce(ctx: CliContext, engine: Engine, opts: WatermarkOptions, video: VideoRef, settings: Setting[], containers: Container[], expirationSeconds: number | undefined, baseUrl: string, label: string): Promise<WatermarkView> {
  const request = requestWatermark(engine, { video, settings, containers, expirationSeconds });
  if (request.expirationIgnored) ctx.output.warn(`${label}: this watermark already exists; its expiration is kept as it was set at creation (SPEC 2.5)`);
  let record = request.watermark;
  if (record.status !== 'READY') {
    if (opts.wait) {
      record = await runWatermarkJob(
        engine,
        record.id,
        {
          onProgress: (done, total) => ctx.output.progress(`${label}: rendering segment ${done}/${total}`),
          onStage: (s) => ctx.output.progress(`${label}: ${s}`),
        },
        ctx.signal,
      );
    } else {
      startBackgroundJob(engine, ctx, record.id);
      record = await waitPlayable(engine, record.id, ctx.signal);
    }
  }
  const view = watermarkView(engine, record, request.video, { baseUrl, apiVersion: opts.api, created: request.created });
  if (opts.out) view.out = await exportWatermark(engine, record, path.resolve(ctx.io.cwd, opts.out));
  return view;
}

async function waitPlayable(engine: Engine, id: string, signal?: AbortSignal) {
  for (;;) {
    if (signal?.aborted) throw new WmarkError('INTERRUPTED', 'interrupted (rendering goes on in the background)');
    const w = engine.store.getWatermark(id)!;
    if (w.status === 'FAILED') throw new WmarkError('WATERMARK_FAILED', `watermark ${id} failed: ${w.error ?? 'unknown reason'}`);
    if (w.status !== 'PENDING') return w;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function watermarkAction(ctx: CliContext, opts: WatermarkOptions): Promise<number> {
  if (!opts.key && !opts.videoId) throw new WmarkError('VIDEO_REQUIRED', 'which video? give --key KEY or --video-id ID');
  if (opts.key && opts.videoId) throw new WmarkError('VIDEO_CONFLICT', 'give either --key or --video-id, not both');
  if (opts.out && !opts.wait) throw new WmarkError('OUT_NEEDS_WAIT', '--out copies finished outputs, so it cannot be combined with --no-wait');
  const containers = parseContainers(opts.containers);
  const config = await ctx.loadConfig();
  const baseUrl = opts.publicUrl ?? config.publicUrl ?? `http://${config.server.host}:${config.server.port}`;
  let expirationSeconds: number | undefined;
  if (opts.expiration !== undefined) {
    const parsed = parseExpirationInput(opts.expiration, Date.now());
    if (!parsed.ok) throw new WmarkError('BAD_EXPIRATION', parsed.message, { hint: parsed.hint }); // the message already starts with --expiration
    expirationSeconds = parsed.unixSeconds;
  }
  const engine = await ctx.openEngine();
  const video: VideoRef = { key: opts.key, videoId: opts.videoId };
  const source = await settingsSource(ctx, engine, opts);

  if (opts.batch) {
    if (source.kind !== 'template') throw new WmarkError('BATCH_NEEDS_TEMPLATE', '--batch needs --template: each row fills the template placeholders');
    if (opts.map?.length) throw new WmarkError('BATCH_AND_MAP', '--batch and --map cannot be combined: put the values in the batch file');
    const { text, label } = await readTextInput(ctx.io, opts.batch);
    const rows = parseBatch(text, /\.ndjson$|\.jsonl$/i.test(opts.batch) ? 'ndjson' : /\.csv$/i.test(opts.batch) ? 'csv' : 'auto');
    if (!rows.ok) throw validationError('BATCH_INVALID', rows.issues.map((i) => `${label}: ${i}`));
    // Every row is checked before any encode starts, so a typo on row 40 doesn't waste 39 renders.
    const issues: string[] = [];
    const planned = rows.value.map((row) => {
      const r = renderTemplate(source.template, row.mappings, opts.api, { mappingsPath: `${label} line ${row.line}` });
      if (!r.ok) issues.push(...r.issues);
      return { row, settings: r.ok ? r.value : [] };
    });
    if (issues.length) throw validationError('BATCH_INVALID', issues);
    let failed = 0;
    for (const { row, settings } of planned) {
      try {
        const view = await produce(ctx, engine, opts, video, settings, containers, expirationSeconds, baseUrl, `line ${row.line}`);
        ctx.output.line({ line: row.line, mappings: row.mappings, ...view }, (c) => `${c.green('✓')} line ${row.line} ${view.id} ${view.status} ${view.urls.player}`);
      } catch (error) {
        if (ctx.signal?.aborted) throw error;
        failed++;
        const e = error instanceof WmarkError ? error : new WmarkError('UNEXPECTED', String(error));
        ctx.output.line({ line: row.line, mappings: row.mappings, error: e.toJSON() }, (c) => `${c.red('✗')} line ${row.line}: ${e.message}`);
      }
    }
    ctx.output.stopSpinner();
    if (failed) ctx.output.warn(`${failed} of ${planned.length} rows failed`);
    return failed ? 6 : 0;
  }

  const settings = withForensic(source.kind === 'template' ? render(source, parseMaps(opts.map), opts.api, '--map') : source.settings, opts.forensic);
  if (source.kind === 'settings' && opts.map?.length) throw new WmarkError('MAP_NEEDS_TEMPLATE', '--map only applies with --template');
  ctx.output.stage('preparing watermark');
  const view = await produce(ctx, engine, opts, video, settings, containers, expirationSeconds, baseUrl, 'watermark');
  ctx.output.result(view, (c) => renderView(view, c));
  return 0;
}

export function renderView(v: WatermarkView, c: ChalkInstance): string {
  const status = v.status === 'READY' ? c.green(v.status) : v.status === 'FAILED' ? c.red(v.status) : c.yellow(v.status);
  return [
    `${c.bold('watermark')} ${v.id}  ${status}${v.created ? '' : c.dim(' (existing, nothing encoded)')}`,
    `  video     ${v.videoKey}`,
    `  player    ${v.urls.player}`,
    `  playlist  ${v.urls.m3u8}`,
    ...(v.urls.mp4 ? [`  mp4       ${v.urls.mp4}`] : []),
    `  href      ${v.urls.href}`,
    `  files     ${v.files.dir}`,
    ...(v.out ? [`  copied to ${v.out}`] : []),
    `  expires   ${v.expiration === null ? 'never' : new Date(v.expiration).toISOString()}`,
  ].join('\n');
}
