// What a benchmark suite is (bench/text.ts, later bench/serve.ts, bench/forensic.ts), and what every suite is given.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { locateTools, type MediaTools } from '../../src/ffmpeg/locate-tools.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Cached inputs and results; gitignored. */
export const OUT_DIR = path.join(REPO_ROOT, 'bench', 'out');
export const WMARK_BIN = path.join(REPO_ROOT, 'bin', 'wmark.js');

export interface BenchArgs {
  /** Suites named on the command line (empty: all). */
  suites: string[];
  rounds: number;
  /** Keep per-run working folders (outputs, data dirs) under bench/out instead of deleting them. */
  keep: boolean;
  /** Any other `--name value` / `--flag` options, for suite-specific settings. */
  options: Record<string, string | true>;
}

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  availableParallelism: number;
  memoryGiB: number;
  platform: string;
  node: string;
  ffmpeg: string;
  ffmpegPath: string;
  ffmpegSource: string;
}

export interface SuiteContext {
  args: BenchArgs;
  tools: MediaTools;
  machine: MachineInfo;
  /** Progress for the person watching (stderr); results go to stdout. */
  log: (message: string) => void;
  /** The environment for child processes. */
  env: NodeJS.ProcessEnv;
}

export interface Suite {
  name: string;
  description: string;
  /** Runs the suite, prints its report to stdout and returns a JSON-able result (also written to bench/out/results-<name>.json). */
  run(ctx: SuiteContext): Promise<unknown>;
}

export function benchTools(env: NodeJS.ProcessEnv): MediaTools {
  // The same resolution wmark itself uses (explicit env > bundled > PATH), so the baseline runs the same ffmpeg binary.
  return locateTools({ ffmpeg: env.WMARK_FFMPEG, ffprobe: env.WMARK_FFPROBE, font: env.WMARK_FONT }, env.PATH);
}

export function machineInfo(tools: MediaTools): MachineInfo {
  let ffmpeg = 'unknown';
  try {
    ffmpeg = execFileSync(tools.ffmpeg.path, ['-hide_banner', '-version'], { encoding: 'utf8' }).split('\n')[0]!.trim();
  } catch (error) {
    ffmpeg = `not runnable: ${String(error)}`;
  }
  return {
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    cores: os.cpus().length,
    availableParallelism: os.availableParallelism(),
    memoryGiB: Number((os.totalmem() / 2 ** 30).toFixed(1)),
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    node: process.version,
    ffmpeg,
    ffmpegPath: tools.ffmpeg.path,
    ffmpegSource: tools.ffmpeg.source,
  };
}

export function formatMachine(m: MachineInfo): string {
  return [
    `machine: ${m.cpuModel}, ${m.cores} cores (availableParallelism ${m.availableParallelism}), ${m.memoryGiB} GiB, ${m.platform}`,
    `node:    ${m.node}`,
    `ffmpeg:  ${m.ffmpeg} (${m.ffmpegSource}: ${m.ffmpegPath})`,
  ].join('\n');
}

/** A fixed-width plain-text table; numbers are right-aligned, with 2 decimals unless `digits` gives a column others. */
export function table(header: string[], rows: (string | number)[][], digits: (number | undefined)[] = []): string {
  const cells = [header, ...rows.map((r) => r.map((c, i) => (typeof c === 'number' ? fmt(c, digits[i]) : c)))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const numeric = header.map((_, i) => rows.every((r) => typeof r[i] === 'number' || r[i] === '-'));
  const line = (r: string[]) =>
    r
      .map((c, i) => (numeric[i] && i > 0 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(cells[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

export function fmt(n: number, digits = 2): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '-';
}

/** How every suite states a target: met or not. */
export function verdict(ok: boolean): 'OK' | 'MISSED' {
  return ok ? 'OK' : 'MISSED';
}

/**
 * Where and how suites run wmark: a neutral working folder (no wmark config file is found by searching upward from
 * it), no colours, no WMARK_HOME; other WMARK_ variables are kept and named in the log.
 */
export async function wmarkEnvironment(ctx: SuiteContext, cwdPrefix: string): Promise<{ cwd: string; env: NodeJS.ProcessEnv }> {
  const cwd = await mkdtemp(path.join(os.tmpdir(), cwdPrefix));
  const env: NodeJS.ProcessEnv = { ...ctx.env, NO_COLOR: '1' };
  delete env.WMARK_HOME;
  const setWmarkVars = Object.keys(env).filter((k) => k.startsWith('WMARK_'));
  if (setWmarkVars.length) ctx.log(`note: wmark runs with ${setWmarkVars.join(', ')} set in the environment`);
  return { cwd, env };
}

/** bin/wmark.js runs dist/ when it exists (the bundle first): warns when a compiled file or the bundle is older than its source, i.e. not what is measured. */
export function warnIfDistStale(log: (message: string) => void): void {
  const src = path.join(REPO_ROOT, 'src');
  const stale = (readdirSync(src, { recursive: true }) as string[])
    .filter((f) => f.endsWith('.ts'))
    .filter((f) => {
      const js = path.join(REPO_ROOT, 'dist', f.replace(/\.ts$/, '.js'));
      return existsSync(js) && statSync(path.join(src, f)).mtimeMs > statSync(js).mtimeMs;
    });
  const bundle = path.join(REPO_ROOT, 'dist', 'bundle', 'wmark.js');
  if (existsSync(bundle)) {
    const built = statSync(bundle).mtimeMs;
    const newer = (readdirSync(src, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts') && statSync(path.join(src, f)).mtimeMs > built);
    if (newer.length) log(`warning: the CLI bundle (dist/bundle/) is older than src/${newer[0]}; run \`npm run build\` to measure the current code`);
  }
  if (stale.length)
    log(
      `warning: dist/ is older than src/ for ${stale.slice(0, 5).join(', ')}${stale.length > 5 ? ` and ${stale.length - 5} more` : ''}; run \`npm run build\` to measure the current code`,
    );
}

/** A non-negative number option (`--name value`), or the fallback when it is not given. */
export function numberOption(value: string | true | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name}: expected a number, got ${String(value)}`);
  return n;
}
