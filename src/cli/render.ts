// How resources read at a terminal: a video, a template, a watermark. The same renderer serves the local engine and
// a remote service; fields a service does not send are left out.
import type { ChalkInstance } from 'chalk';
import type { TemplateResource, VideoResource, WatermarkResource } from '../service/watermark-service.js';

const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/**
 * A time for a person, in this machine's time zone to the minute: "2025-11-26 14:05". Only tables and other human
 * output use it; every `--json` value is Unix milliseconds, as in the API.
 */
export function humanDate(ms: number): string {
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) return '-';
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}`;
}

export function renderVideo(v: VideoResource, c: ChalkInstance): string {
  const status = v.status === 'INGESTED' ? c.green(v.status) : v.status?.startsWith('FAILED') ? c.red(v.status) : c.yellow(v.status ?? 'unknown');
  const lines = [`${c.bold('video')}  ${v.id}`, ...(v.key !== undefined ? [`  key        ${v.key}`] : []), `  status     ${status}`];
  if (v.name) lines.push(`  name       ${v.name}`);
  if (num(v.width) && num(v.height)) {
    const rate = num(v.frameRate) ? ` @ ${v.frameRate} fps` : '';
    const audio = typeof v.hasAudio === 'boolean' ? (v.hasAudio ? ', with audio' : ', no audio') : '';
    lines.push(`  picture    ${v.width}x${v.height}${rate}${audio}`);
  }
  if (num(v.duration)) lines.push(`  duration   ${v.duration.toFixed(3)} s${num(v.segments) ? ` in ${v.segments} segments` : ''}`);
  if (typeof v.enableForensic === 'boolean')
    lines.push(`  forensic   ${v.enableForensic ? `enabled${typeof v.forensicLayout === 'string' ? ` (${v.forensicLayout} layout)` : ''}` : 'no'}`);
  if (typeof v.error === 'string') lines.push(`  error      ${c.red(v.error)}`);
  return lines.join('\n');
}

export function renderTemplateDetail(t: TemplateResource, c: ChalkInstance): string {
  return [
    `${c.bold('template')}  ${t.id}`,
    ...(t.name ? [`  name          ${t.name}`] : []),
    ...(t.description ? [`  description   ${t.description}`] : []),
    ...(t.placeholders ? [`  placeholders  ${t.placeholders.length ? t.placeholders.join(', ') : c.dim('none')}`] : []),
    ...(t.settings ? [`  settings      ${JSON.stringify(t.settings)}`] : []),
  ].join('\n');
}

export function renderTemplateList(all: TemplateResource[], where: string, c: ChalkInstance): string {
  if (!all.length) return c.dim(`no templates on ${where}`);
  return all
    .map(
      (t) =>
        `${c.bold(t.id)}${t.builtin === true ? c.dim(' (built-in)') : ''}  ${t.name ?? ''}${t.placeholders ? `\n  placeholders: ${t.placeholders.length ? t.placeholders.join(', ') : c.dim('none')}` : ''}`,
    )
    .join('\n');
}

/** What the CLI adds to a watermark resource: local files, where --out copied them, whether this request created it. */
export interface WatermarkExtras {
  created?: boolean;
  /** An existing watermark that this run went on rendering: the segments it rendered, of all. */
  resumed?: { rendered: number; total: number };
  videoKey?: string;
  /** When the watermark was made (Unix ms): shown by `watermark view`. */
  createdOn?: number;
  files?: { dir: string; m3u8?: string; mp4?: string; complete: boolean };
  /** Which render its segments get (`band`: the band alone, spliced in; `full`: whole pictures), and why. */
  render?: { strategy: 'band' | 'full'; reason: string };
  out?: string;
}

export function renderWatermark(r: WatermarkResource & WatermarkExtras, c: ChalkInstance, note?: string): string {
  const status = r.status === 'READY' ? c.green(r.status) : r.status === 'FAILED' ? c.red(r.status) : c.yellow(r.status);
  const containers = r.containers ?? {};
  const rendering = r.files?.complete === false && r.status === 'READY';
  const notes = [
    ...(r.resumed ? [`resumed: rendered ${r.resumed.rendered} of ${r.resumed.total} segments`] : r.created === false ? ['existing, nothing encoded'] : []),
    ...(rendering ? ['playable; later segments still rendering'] : []),
    ...(note ? [note] : []),
  ];
  return [
    `${c.bold('watermark')} ${typeof r.id === 'string' ? `${r.id}  ` : ''}${status}${notes.length ? c.dim(`  (${notes.join('; ')})`) : ''}`,
    ...(r.videoKey ? [`  video     ${r.videoKey}`] : []),
    ...(typeof r.createdOn === 'number' ? [`  created   ${humanDate(r.createdOn)}`] : []),
    ...(containers.href ? [`  player    ${containers.href}`] : []),
    ...(containers.m3u8 ? [`  playlist  ${containers.m3u8}`] : r.status === 'PENDING' ? [`  playlist  ${c.dim('(listed once READY)')}`] : []),
    ...(containers.mp4 ? [`  mp4       ${containers.mp4}`] : []),
    ...(r.href ? [`  href      ${r.href}`] : []),
    ...(r.files ? [`  files     ${r.files.dir}`] : []),
    ...(r.render ? [`  render    ${r.render.strategy} ${c.dim(`(${r.render.reason})`)}`] : []),
    ...(r.out ? [`  copied to ${r.out}`] : []),
    ...expiryLines(r),
    ...(typeof r.error === 'string' ? [`  error     ${c.red(r.error)}`] : []),
  ].join('\n');
}

/** When the printed links stop working (their signed `expiration`), beside the watermark's own expiration. */
function expiryLines(r: WatermarkResource): string[] {
  const link = r.containers?.m3u8 ?? r.containers?.href ?? r.href;
  let linksUntil: number | undefined;
  try {
    const signed = link ? Number(new URL(link).searchParams.get('expiration') ?? Number.NaN) : Number.NaN;
    if (Number.isFinite(signed)) linksUntil = signed;
  } catch {
    // Not a URL: nothing to say about it.
  }
  const lines = linksUntil !== undefined ? [`  links     expire ${humanDate(linksUntil)}`] : [];
  if (r.expiration !== undefined) lines.push(`  expires   ${r.expiration === null ? 'never (the watermark itself)' : humanDate(r.expiration)}`);
  return lines;
}

/**
 * Rows as aligned columns. At a terminal (`header`) a header row names them; piped output has none, so `cut`/`awk`
 * see data lines only. The last column is not padded.
 */
export function renderTable(headers: string[], rows: string[][], c: ChalkInstance, header: boolean): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes start with ESC, which is what this strips
  const visible = (s: string) => s.replace(/\u001b\[[0-9;]*m/g, '').length;
  const all = header ? [headers, ...rows] : rows;
  const widths = headers.map((_, i) => Math.max(...all.map((r) => visible(r[i] ?? ''))));
  const line = (r: string[]) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell + ' '.repeat(widths[i]! - visible(cell))))
      .join('  ')
      .trimEnd();
  return [...(header ? [c.bold(line(headers))] : []), ...rows.map(line)].join('\n');
}
