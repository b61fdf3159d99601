// `wmark watermark`: one API watermark request (or one per batch row) from flags, a settings file or a template, sent
// to the local engine or, with --remote, to a remote service; the answer printed as the API's watermark resource.
import path from 'node:path';
import { type Command, Option } from 'commander';
import pLimit from 'p-limit';
import type { ApiVersion } from '../../core/api-version.js';
import { WmarkError } from '../../core/errors.js';
import { MAX_SHARED_RENDERS } from '../../core/plan/render-args.js';
import type { LocalService } from '../../engine/app/local-service.js';
import type { WatermarkResource, WatermarkResult, WatermarkService } from '../../service/watermark-service.js';
import { action, mergedOptions } from '../action.js';
import type { AnyService, CliContext } from '../context.js';
import { numberFlag } from '../flag-error.js';
import { describeWatermark, failedExit, follow } from '../follow.js';
import { pathOf } from '../help.js';
import { canPrompt } from '../io.js';
import { afterLinks, warnIfUnserved } from '../link-check.js';
import { toWmarkError } from '../output.js';
import { addRemoteOptions, countFlag, durationFlag, type RemoteFlags } from '../remote-flags.js';
import { renderWatermark, type WatermarkExtras } from '../render.js';
import type { RequestFlags, templateRequests } from '../watermark-request.js';

interface WatermarkOptions extends RequestFlags, RemoteFlags {
  wait?: boolean;
  open?: boolean;
  out?: string;
  publicUrl?: string;
  interval?: string;
  concurrency?: string;
  fullRender?: boolean;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function registerWatermark(program: Command): Command {
  // `wmark watermark [flags]` and `wmark watermark create [flags]` are the same command; list, view and rm manage
  // what exists. Commander gives the parent every flag it knows, so subcommands read theirs with mergedOptions.
  const command = withCreateOptions(
    program
      .command('watermark')
      .description('watermark an ingested video (local engine, or a remote service with --remote); list, view and rm manage watermarks'),
  );
  withCreateOptions(command.command('create').description('the same as `wmark watermark` with flags'));
  return command;
}

/** The flags of a watermark request, grouped as help shows them, and the action that sends it. */
function withCreateOptions(cmd: Command): Command {
  const number = (flag: string) => numberFlag(flag, pathOf(cmd));
  cmd
    .optionsGroup('Video:')
    .option('--key <key>', 'the video, by the key given at ingest')
    .option('--video-id <id>', 'the video, by id')
    .optionsGroup('Text or logo (one TEXT or IMAGE setting; sizes are fractions of the frame):')
    .option('--text <text>', 'the text, drawn as written')
    .option('--image <file|url>', 'a PNG, JPEG or WebP logo: a file or a URL')
    .option('--image-width <fraction>', 'logo width over frame width (default 0.2)', number('--image-width'))
    .option('--image-opacity <0..1>', 'logo opacity (default 1)', number('--image-opacity'))
    .option('--x <fraction>', 'anchor x: 0 left .. 1 right (default 0.5)', number('--x'))
    .option('--y <fraction>', 'anchor y: 0 top .. 1 bottom (default 0.5)', number('--y'))
    .option('--align <edge>', 'LEFT, CENTER (default) or RIGHT edge at x')
    .option('--vertical-align <edge>', 'TOP, MIDDLE (default) or BOTTOM edge at y')
    .option('--font-size <fraction>', 'text height over frame height (default 0.05)', number('--font-size'))
    .option('--font-color <RRGGBB>', 'text colour (default FFFFFF)')
    .option('--font-opacity <0..1>', 'text opacity (default 0.3)', number('--font-opacity'))
    .option('--shadow-color <RRGGBB>', 'shadow colour (default 000000)')
    .option('--shadow-opacity <0..1>', 'shadow opacity (default 0.1)', number('--shadow-opacity'))
    .option('--shadow-offset-x <fraction>', 'of the font size (default 0.08)', number('--shadow-offset-x'))
    .option('--shadow-offset-y <fraction>', 'of the font size (default 0.08)', number('--shadow-offset-y'))
    .option('--move-to-x <fraction>', 'MOVE animation: end x', number('--move-to-x'))
    .option('--move-to-y <fraction>', 'MOVE animation: end y', number('--move-to-y'))
    .option('--move-start <seconds>', 'MOVE animation: start, on the video timeline', number('--move-start'))
    .option('--move-end <seconds>', 'MOVE animation: end, on the video timeline', number('--move-end'))
    .optionsGroup('Other settings and the request:')
    .option('--forensic <payload>', 'invisible mark: 0..65535, 2 characters or base64')
    .option('--settings <file>', 'a JSON array of setting objects; - reads stdin')
    .option('--template <id>', 'a template to render (`wmark template list`)')
    .option('--map <name=value>', "a template placeholder's value (repeatable)", collect)
    .option('--batch <file>', 'with --template: CSV (header: its placeholders) or NDJSON, a watermark a row')
    .option('--concurrency <n>', '--batch rows at once (default 8; remote 4)')
    .option('--containers <list>', 'outputs: m3u8, mp4 or m3u8,mp4 (default both)')
    .option('--expiration <when>', 'Unix seconds, ISO date or duration such as 7d')
    .addOption(new Option('--api <version>', 'API of the links, or to call remotely').choices(['1.0', '2.0']))
    .option('--open', 'open the player link in the browser')
    .optionsGroup('Local options (the engine on this machine; the default):')
    .option('--no-wait', 'return once it plays; the rest renders later')
    .option('--out <dir>', 'copy the HLS folder and mp4 to <dir>/<id>/')
    // Kept out of the help's 80 lines: an operator's switch, documented in docs/band-render.md.
    .addOption(new Option('--full-render', 'render whole pictures even where the mark fits a band').hideHelp())
    .option('--public-url <url>', 'base of the links (default: the running serve)')
    .optionsGroup('Remote options (with --remote):')
    .option('--wait', 'wait until READY (default: the first answer)')
    .option('--interval <duration>', 'time between polls (default 3s)')
    .action(action((ctx, _opts: WatermarkOptions, cmd: Command) => watermarkCommand(ctx, mergedOptions<WatermarkOptions>(cmd), cmd)));
  // --no-wait is declared first for the help's grouping, which would make "wait" default to true; unset means
  // "the mode's default" (local: wait, remote: don't).
  cmd.setOptionValueWithSource('wait', undefined, 'default');
  addRemoteOptions(cmd, { api: false });
  return cmd;
}

async function watermarkCommand(ctx: CliContext, opts: WatermarkOptions, cmd: Command): Promise<number> {
  const remote = opts.remote !== undefined;
  if (remote && opts.out) throw new WmarkError('OUT_LOCAL_ONLY', '--out copies local files, so it cannot be combined with --remote');
  if (remote && opts.publicUrl) throw new WmarkError('PUBLIC_URL_LOCAL_ONLY', '--public-url applies to local mode; a remote service signs its own links');
  // Locally the default is to wait for every output; remotely, to return the service's answer.
  const wait = opts.wait ?? !remote;
  if (opts.out && !wait) throw new WmarkError('OUT_NEEDS_WAIT', '--out copies finished outputs, so it cannot be combined with --no-wait');
  // Locally, rows in flight together are rendered together: each working segment is decoded once for all of them.
  const concurrency = opts.concurrency !== undefined ? countFlag(opts.concurrency, '--concurrency', 64) : remote ? 4 : MAX_SHARED_RENDERS;
  const intervalMs = opts.interval !== undefined ? durationFlag(opts.interval, '--interval') : undefined;
  const given = (name: string) => cmd.getOptionValueSource(name) === 'cli' || cmd.parent?.getOptionValueSource(name) === 'cli';
  const askedApi = opts.api as ApiVersion | undefined;
  // The request is checked before anything is opened: a usage error costs no engine start and no network.
  const openService = () => ctx.service(opts, { queue: wait ? 'in-process' : 'detached', apiFlag: given('api') ? opts.api : undefined, api: askedApi });
  // At a terminal, what is missing is asked for (which video, what text); elsewhere the usage error below says it.
  let early: AnyService | undefined;
  if (wantsPrompt(ctx, opts)) {
    early = await openService();
    await askMissing(ctx, early, opts);
  }
  // The request's schemas and the batch file's parser load here, not at every command's start.
  const { planRequests, settingsRequest, templateRequests } = await import('../watermark-request.js');
  const plan = await planRequests(ctx.io, opts, Date.now());
  const service = early ?? (await openService());
  const api = await service.apiVersion();
  const local = service.kind === 'local' ? service : undefined;
  const followOptions = { intervalMs, label: 'watermark' };

  const produce = async (request: Parameters<WatermarkService['watermarks']['request']>[0], label: string): Promise<WatermarkResource & WatermarkExtras> => {
    const result = await service.watermarks.request(request, { api, signal: ctx.signal, ...(opts.fullRender ? { fullRender: true } : {}) });
    for (const w of result.warnings) ctx.output.warn(`${label}: ${w}`);
    // An existing watermark may be one an earlier run left half-rendered: what is there now tells what this run adds.
    const before = local && !result.created && result.resource.id ? await local.watermarks.renderedSegments(result.resource) : undefined;
    const resource = await settle(ctx, service, result, wait, { ...followOptions, label });
    const shaped = await withExtras(local, resource, result, opts.out ? path.resolve(ctx.io.cwd, opts.out) : undefined);
    if (!before || !local || resource.status === 'FAILED') return shaped;
    const after = await local.watermarks.renderedSegments(resource);
    return after.done > before.done ? { ...shaped, resumed: { rendered: after.done - before.done, total: after.total } } : shaped;
  };

  if (plan.template) {
    const template = await service.templates.get(plan.template.id, { api });
    const requests = templateRequests(plan, template);
    if (plan.batch) return runBatch(ctx, requests, produce, { concurrency, api, where: service.description, local: Boolean(local) });
    ctx.output.stage(`requesting a watermark from ${service.description} (API ${api})`);
    const resource = await produce(requests[0]!.request, 'watermark');
    return printResult(ctx, resource, api, Boolean(local), opts.open);
  }
  ctx.output.stage(`requesting a watermark from ${service.description} (API ${api})`);
  const resource = await produce(settingsRequest(plan, api), 'watermark');
  return printResult(ctx, resource, api, Boolean(local), opts.open);
}

/** Prompts only for a person: stdin and stdout a terminal, no CI, no --json; and only when the video or text is missing. */
function wantsPrompt(ctx: CliContext, opts: WatermarkOptions): boolean {
  if (!canPrompt(ctx.io) || ctx.output.mode === 'json') return false;
  const noVideo = !opts.key && !opts.videoId;
  const noSettings = opts.text === undefined && opts.image === undefined && !opts.settings && !opts.template && !opts.batch && opts.forensic === undefined;
  return noVideo || noSettings;
}

/** Fills --key/--video-id from a pick among the ingested videos, and --text from what is typed. */
async function askMissing(ctx: CliContext, service: WatermarkService, opts: WatermarkOptions): Promise<void> {
  const prompts = await import('@inquirer/prompts');
  const context = { input: ctx.io.stdin as NodeJS.ReadableStream, output: ctx.io.stderr as unknown as NodeJS.WritableStream, signal: ctx.signal };
  if (!opts.key && !opts.videoId) {
    const videos = (await service.videos.list()).filter((v) => v.status === 'INGESTED');
    if (videos.length === 0)
      throw new WmarkError('VIDEO_REQUIRED', `no ingested video on ${service.description} to watermark`, {
        hint: 'Ingest one first: wmark ingest movie.mp4 --key movie',
      });
    const picked = await prompts.select(
      {
        message: 'Which video?',
        choices: videos.map((v) => ({
          name: `${v.key ?? v.id}${typeof v.duration === 'number' ? `  ${v.duration.toFixed(1)} s` : ''}${typeof v.width === 'number' ? `  ${v.width}x${v.height}` : ''}${v.name ? `  ${v.name}` : ''}`,
          value: v,
        })),
      },
      context,
    );
    if (picked.key !== undefined) opts.key = picked.key;
    else opts.videoId = picked.id;
  }
  if (opts.text === undefined && opts.image === undefined && !opts.settings && !opts.template && !opts.batch && opts.forensic === undefined) {
    opts.text = await prompts.input(
      { message: "Text to draw (e.g. the viewer's email)", required: true, validate: (t) => t.trim() !== '' || 'type some text' },
      context,
    );
  }
}

/** Follows the watermark to the goal the flags ask for; returns the resource as it stands then. */
async function settle(
  ctx: CliContext,
  service: WatermarkService,
  result: WatermarkResult,
  wait: boolean,
  options: { intervalMs?: number; label: string },
): Promise<WatermarkResource> {
  const goal = service.kind === 'local' ? (wait ? 'complete' : 'playable') : wait ? 'complete' : undefined;
  if (!goal || result.resource.status === 'FAILED') return result.resource;
  const last = await follow(ctx, service.watermarks.watch(result.resource, goal, { signal: ctx.signal, intervalMs: options.intervalMs }), describeWatermark, {
    label: options.label,
    ...(service.kind === 'remote' ? { pollEveryMs: options.intervalMs ?? 3000 } : {}),
  });
  return last.resource ?? (await service.watermarks.get(result.resource, { api: result.api }));
}

async function withExtras(
  local: LocalService | undefined,
  resource: WatermarkResource,
  result: WatermarkResult,
  out: string | undefined,
): Promise<WatermarkResource & WatermarkExtras> {
  const shaped: WatermarkResource & WatermarkExtras = { ...resource, created: result.created };
  if (!local) return shaped;
  shaped.files = await local.watermarks.files(resource);
  if (!out || resource.status === 'FAILED') return shaped;
  return { ...shaped, out: await local.watermarks.export(resource, out) };
}

async function printResult(ctx: CliContext, resource: WatermarkResource & WatermarkExtras, api: ApiVersion, local: boolean, open?: boolean): Promise<number> {
  ctx.output.result(resource, (c) => renderWatermark(resource, c, `API ${api}`));
  if (resource.status === 'PENDING' && resource.href && ctx.output.mode !== 'json')
    ctx.output.info(`not READY yet: follow it with  wmark poll '${resource.href}'  (or use --wait)`);
  if (local && resource.status !== 'FAILED') await afterLinks(ctx, resource, open);
  else if (open && resource.containers?.href) await afterLinks(ctx, resource, open, { check: false });
  return failedExit(ctx, resource);
}

type Produce = (request: Parameters<WatermarkService['watermarks']['request']>[0], label: string) => Promise<WatermarkResource & WatermarkExtras>;

/** One request per row, `concurrency` at a time; each result is one NDJSON line as soon as it is known. */
async function runBatch(
  ctx: CliContext,
  rows: ReturnType<typeof templateRequests>,
  produce: Produce,
  options: { concurrency: number; api: ApiVersion; where: string; local: boolean },
): Promise<number> {
  let done = 0;
  let failed = 0;
  let exitCode = 0;
  let fatal: WmarkError | undefined;
  let linked: WatermarkResource | undefined;
  const progress = () => ctx.output.progress(`${done}/${rows.length} watermarks (${options.where}, API ${options.api}, ${options.concurrency} at a time)`);
  progress();
  const limit = pLimit(options.concurrency);
  await Promise.all(
    rows.map((row) =>
      limit(async () => {
        if (fatal) return;
        const label = `line ${row.line}`;
        try {
          const resource = await produce(row.request, label);
          if (resource.status !== 'FAILED') linked ??= resource;
          if (resource.status === 'FAILED') {
            failed++;
            exitCode ||= new WmarkError('WATERMARK_FAILED', '').exitCode;
          }
          ctx.output.line({ line: row.line, mappings: row.mappings, ...resource }, (c) =>
            `${resource.status === 'FAILED' ? c.red('✗') : c.green('✓')} ${label} ${resource.id ?? ''} ${resource.status} ${resource.containers?.href ?? ''}`.replace(
              / {2,}/g,
              ' ',
            ),
          );
        } catch (error) {
          const e = toWmarkError(error);
          if (ctx.signal?.aborted || e.kind === 'interrupted') throw e;
          failed++;
          exitCode ||= e.exitCode;
          // Nothing else will work with bad credentials or no time left: stop sending, report the rows already sent.
          if (e.kind === 'auth' || e.kind === 'timeout') fatal ??= e;
          ctx.output.line({ line: row.line, mappings: row.mappings, error: e.toJSON() }, (c) => `${c.red('✗')} ${label}: ${e.message}`);
        } finally {
          done++;
          progress();
        }
      }),
    ),
  );
  ctx.output.stopSpinner();
  const skipped = rows.length - done;
  if (skipped) ctx.output.warn(`stopped after ${fatal!.message}: ${skipped} of ${rows.length} rows were not sent`);
  if (failed) ctx.output.warn(`${failed} of ${rows.length} rows failed`);
  if (options.local && linked) await warnIfUnserved(ctx, linked);
  return fatal ? fatal.exitCode : exitCode;
}
