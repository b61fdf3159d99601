// `wmark watermark --remote`: every input form of the local command sent as a SPEC watermark request (1.0 or 2.0); batches run with bounded concurrency.
import type { Command } from 'commander';
import { WmarkError, validationError } from '../../core/errors.js';
import { parseExpirationInput } from '../../core/expiration.js';
import { parseBatch, type BatchRow } from '../../core/parse-batch.js';
import { encodeForensicContent } from '../../core/forensic-payload.js';
import { parseSettings } from '../../core/setting-schema.js';
import type { ApiVersion } from '../../core/api-version.js';
import { formatSeconds } from '../../remote/client.js';
import { pollHref } from '../../remote/poll.js';
import { FINAL_STATUSES, type RemoteWatermark } from '../../remote/schemas.js';
import type { RemoteSession } from '../../remote/session.js';
import type { CliContext } from '../context.js';
import { parseForensicPayload } from '../forensic-flag.js';
import { toWmarkError } from '../output.js';
import { readJsonInput, readTextInput } from '../read-input.js';
import { failedExit, pollWithProgress, renderRemoteWatermark } from './poll.js';
import { openRemote, parseCount, parseDuration, type RemoteFlags } from './remote-common.js';
import { flagIssue, parseContainers, parseMaps, settingFromFlags } from './watermark.js';

export type RemoteWatermarkOptions = Parameters<typeof settingFromFlags>[0] &
  RemoteFlags & {
    concurrency?: string;
    interval?: string;
  };

type SettingsPart = { settings: unknown[] } | { settingsTemplateMapping: { id: string; mappings: Record<string, string> } };

export const DEFAULT_CONCURRENCY = 4;

/** Checks the inputs exactly as the local command does, before anything is sent. */
async function settingsPart(ctx: CliContext, opts: RemoteWatermarkOptions): Promise<{ part?: SettingsPart; template?: string }> {
  const fromFlags = settingFromFlags(opts);
  const sources = [fromFlags && 'setting flags (--text, --x, ...)', opts.settings && '--settings', opts.template && '--template'].filter(Boolean);
  // A forensic mark alone is a complete watermark, as locally.
  if (sources.length === 0 && opts.forensic !== undefined) return { part: { settings: [] } };
  if (sources.length === 0) throw new WmarkError('SETTINGS_REQUIRED', 'say what to draw: --text (with setting flags), --settings FILE, or --template ID with --map', { hint: 'e.g. wmark watermark --remote --key KEY --text "for alice@example.com"' });
  if (sources.length > 1) throw new WmarkError('SETTINGS_CONFLICT', `use only one of ${sources.join(', ')}`);
  if (!opts.template && opts.map?.length) throw new WmarkError('MAP_NEEDS_TEMPLATE', '--map only applies with --template');
  if (!opts.template && opts.batch) throw new WmarkError('BATCH_NEEDS_TEMPLATE', '--batch needs --template: each row fills the template placeholders');
  if (opts.template) {
    if (opts.batch && opts.map?.length) throw new WmarkError('BATCH_AND_MAP', '--batch and --map cannot be combined: put the values in the batch file');
    // The template lives on the service, which renders it; the mappings are sent as they are (SPEC 2.3).
    return opts.batch ? { template: opts.template } : { part: { settingsTemplateMapping: { id: opts.template, mappings: parseMaps(opts.map) } }, template: opts.template };
  }
  if (fromFlags) {
    if (fromFlags.content === undefined) throw new WmarkError('TEXT_REQUIRED', 'setting flags need --text');
    const parsed = parseSettings([fromFlags], { apiVersion: '2.0', path: 'flags' });
    if (!parsed.ok) throw validationError('SETTINGS_INVALID', parsed.issues.map(flagIssue));
    return { part: { settings: [fromFlags] } };
  }
  // A settings file is sent as written: the service is the judge of fields this CLI may not know.
  const raw = await readJsonInput(ctx.io, opts.settings!);
  if (!Array.isArray(raw) || raw.length === 0 || raw.some((s) => typeof s !== 'object' || s === null || Array.isArray(s))) {
    throw new WmarkError('SETTINGS_INVALID', `${opts.settings}: expected a non-empty JSON array of setting objects (SPEC 2.2)`);
  }
  return { part: { settings: raw } };
}

export async function remoteWatermark(ctx: CliContext, opts: RemoteWatermarkOptions, cmd: Command): Promise<number> {
  const given = (name: string) => cmd.getOptionValueSource(name) === 'cli';
  if (!opts.key && !opts.videoId) throw new WmarkError('VIDEO_REQUIRED', 'which video? give --key KEY or --video-id ID');
  if (opts.key && opts.videoId) throw new WmarkError('VIDEO_CONFLICT', 'give either --key or --video-id, not both');
  if (opts.out) throw new WmarkError('OUT_LOCAL_ONLY', '--out copies local files, so it cannot be combined with --remote', { hint: 'Download the mp4 link instead.' });
  if (opts.publicUrl) throw new WmarkError('PUBLIC_URL_LOCAL_ONLY', '--public-url applies to local mode; a remote service signs its own links');
  // Only what the user asked for is sent: the service applies its own defaults (SPEC 2.1 containers).
  const containers = given('containers') ? parseContainers(opts.containers) : undefined;
  const wait = given('wait') && opts.wait;
  const concurrency = opts.concurrency !== undefined ? parseCount(opts.concurrency, '--concurrency', 64) : DEFAULT_CONCURRENCY;
  const intervalMs = opts.interval !== undefined ? parseDuration(opts.interval, '--interval') : 3_000;
  let expiration: number | undefined;
  if (opts.expiration !== undefined) {
    const parsed = parseExpirationInput(opts.expiration, Date.now());
    if (!parsed.ok) throw new WmarkError('BAD_EXPIRATION', parsed.message, { hint: parsed.hint });
    expiration = parsed.unixSeconds;
  }
  const { part, template } = await settingsPart(ctx, opts);
  const forensicPayload = opts.forensic !== undefined ? parseForensicPayload(opts.forensic) : undefined;
  if (forensicPayload !== undefined && (!part || !('settings' in part))) {
    throw new WmarkError('SETTINGS_CONFLICT', '--forensic cannot be added to a remote --template request: the service renders the template', { hint: 'Put a FORENSIC setting with a placeholder in the template and give the payload with --map (or a batch column).' });
  }
  let rows: BatchRow[] | undefined;
  if (opts.batch) {
    const { text, label } = await readTextInput(ctx.io, opts.batch);
    const parsed = parseBatch(text, /\.ndjson$|\.jsonl$/i.test(opts.batch) ? 'ndjson' : /\.csv$/i.test(opts.batch) ? 'csv' : 'auto');
    if (!parsed.ok) throw validationError('BATCH_INVALID', parsed.issues.map((i) => `${label}: ${i}`));
    rows = parsed.value;
  }

  const remote = await openRemote(ctx, opts, { apiFlag: given('api') ? opts.api : undefined });
  const session = remote.session;
  const api = await session.resolveApi(remote.api);
  const base: Record<string, unknown> = {
    ...(opts.key !== undefined ? { key: opts.key } : { videoId: opts.videoId }),
    ...(containers ? { containers } : {}),
    ...(expiration !== undefined ? { expiration } : {}),
  };

  if (forensicPayload !== undefined && part && 'settings' in part) {
    // SPEC 2.2: the payload travels as FORENSIC content, 2 ASCII characters in 1.0, base64 of 2 bytes in 2.0.
    const content = encodeForensicContent(forensicPayload, api);
    if (content === undefined) throw new WmarkError('BAD_FORENSIC', `--forensic: payload ${forensicPayload} cannot be written as 2 ASCII characters, which API 1.0 requires`, { hint: 'Use --api 2.0, or a payload whose two bytes are both below 128.' });
    part.settings = [...part.settings.filter((s) => (s as { type?: unknown }).type !== 'FORENSIC'), { type: 'FORENSIC', content }];
  }
  if (rows) return runBatch(ctx, session, api, rows, { base, template: template!, wait, intervalMs, concurrency });

  ctx.output.stage(`requesting a watermark from ${session.baseUrl} (API ${api})`);
  const { response } = await session.createWatermark(api, { ...base, ...part });
  let final: RemoteWatermark = response;
  let note = `API ${api}`;
  if (wait && !FINAL_STATUSES.has(response.status)) {
    if (!response.href) throw new WmarkError('NO_HREF', `the service answered ${response.status} without an href to poll`);
    const polled = await pollWithProgress(ctx, session.client, response.href, { intervalMs, deadline: session.deadline, timeoutLabel: session.timeoutLabel });
    final = polled.response;
    note = `API ${api}, ready after ${formatSeconds(polled.elapsedMs)}`;
  }
  ctx.output.result(final, (c) => renderRemoteWatermark(final, c, note));
  if (!FINAL_STATUSES.has(final.status) && final.href && ctx.output.mode !== 'json') ctx.output.info(`not READY yet: follow it with  wmark poll '${final.href}'  (or use --wait)`);
  return failedExit(ctx, final);
}

interface BatchOptions {
  base: Record<string, unknown>;
  template: string;
  wait: boolean;
  intervalMs: number;
  concurrency: number;
}

/** One request per row, at most `concurrency` at a time; each result is an NDJSON line as soon as it is known. */
async function runBatch(ctx: CliContext, session: RemoteSession, api: ApiVersion, rows: BatchRow[], options: BatchOptions): Promise<number> {
  let done = 0;
  let failed = 0;
  let exitCode = 0;
  let fatal: WmarkError | undefined;
  const progress = () => ctx.output.progress(`${done}/${rows.length} watermarks (API ${api}, ${options.concurrency} at a time)`);
  progress();
  const one = async (row: BatchRow) => {
    try {
      let { response } = await session.createWatermark(api, { ...options.base, settingsTemplateMapping: { id: options.template, mappings: row.mappings } });
      if (options.wait && !FINAL_STATUSES.has(response.status) && response.href) {
        response = (await pollHref(session.client, response.href, { intervalMs: options.intervalMs, deadline: session.deadline, timeoutLabel: session.timeoutLabel, signal: ctx.signal })).response;
      }
      if (response.status === 'FAILED') {
        failed++;
        exitCode ||= 6;
      }
      const player = response.containers?.href ?? '';
      ctx.output.line({ line: row.line, mappings: row.mappings, ...response }, (c) => `${response.status === 'FAILED' ? c.red('✗') : c.green('✓')} line ${row.line} ${response.status} ${player}`);
    } catch (error) {
      const e = toWmarkError(error);
      if (ctx.signal?.aborted || e.kind === 'interrupted') throw e;
      failed++;
      exitCode ||= e.exitCode;
      // Nothing else will work with bad credentials or no time left: stop sending, report the rows already sent.
      if (e.kind === 'auth' || e.kind === 'timeout') fatal ??= e;
      ctx.output.line({ line: row.line, mappings: row.mappings, error: e.toJSON() }, (c) => `${c.red('✗')} line ${row.line}: ${e.message}`);
    } finally {
      done++;
      progress();
    }
  };
  let next = 0;
  const worker = async () => {
    while (next < rows.length && !fatal) await one(rows[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency, rows.length) }, worker));
  ctx.output.stopSpinner();
  const skipped = rows.length - done;
  if (skipped) ctx.output.warn(`stopped after ${fatal!.message}: ${skipped} of ${rows.length} rows were not sent`);
  if (failed) ctx.output.warn(`${failed} of ${rows.length} rows failed`);
  return fatal ? fatal.exitCode : exitCode;
}
