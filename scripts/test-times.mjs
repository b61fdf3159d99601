// Where the test suite's time goes: each project's wall time and the ten slowest files, read from vitest's JSON report.
// scripts/test.sh prints this before its closing "N passed, N failed" line, so a slow file shows up in every run's log.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project a test file belongs to: its folder under test/ (unit, integration, e2e, browser, slow); bench's own tests are unit tests. */
function projectOf(file, root) {
  const parts = path.relative(root, file).split(path.sep);
  if (parts[0] === 'bench') return 'unit';
  return parts[0] === 'test' && parts.length > 2 ? parts[1] : 'other';
}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

/**
 * Lines that say, per project, the wall time from its first file's start to its last file's end (projects run side
 * by side, so these overlap) with the summed time of its files, then the `slowest` slowest files.
 */
export function timingLines(report, root, slowest = 10) {
  const files = (report.testResults ?? [])
    .filter((t) => Number.isFinite(t.startTime) && Number.isFinite(t.endTime))
    .map((t) => ({ file: path.relative(root, t.name), project: projectOf(t.name, root), start: t.startTime, ms: t.endTime - t.startTime }));
  if (files.length === 0) return [];
  const projects = new Map();
  for (const f of files) {
    const p = projects.get(f.project) ?? { start: Infinity, end: -Infinity, sum: 0, count: 0 };
    p.start = Math.min(p.start, f.start);
    p.end = Math.max(p.end, f.start + f.ms);
    p.sum += f.ms;
    p.count += 1;
    projects.set(f.project, p);
  }
  const lines = ['time per test project (wall; summed over its files):'];
  for (const [name, p] of [...projects].sort((a, b) => b[1].end - b[1].start - (a[1].end - a[1].start)))
    lines.push(`  ${name.padEnd(12)} ${seconds(p.end - p.start).padStart(9)} wall; ${seconds(p.sum).padStart(9)} in ${p.count} files`);
  lines.push(`slowest ${Math.min(slowest, files.length)} test files:`);
  for (const f of [...files].sort((a, b) => b.ms - a.ms).slice(0, slowest)) lines.push(`  ${seconds(f.ms).padStart(9)}  ${f.file}`);
  return lines;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const [reportPath, root = process.cwd()] = process.argv.slice(2);
  try {
    for (const line of timingLines(JSON.parse(readFileSync(reportPath, 'utf8')), path.resolve(root))) console.log(line);
  } catch (error) {
    console.log(`(no timings: ${error instanceof Error ? error.message : String(error)})`);
  }
}
