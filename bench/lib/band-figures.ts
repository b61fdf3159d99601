// The band suite's pure parts: a figure's spread over runs, x264's PSNR line, a band stream cut into the pictures of
// each segment, the gate's verdict on one spliced segment, and a counter read from serve's /metrics.
export interface Spread {
  min: number;
  median: number;
  max: number;
}

export function spread(values: readonly number[]): Spread {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return { min: NaN, median: NaN, max: NaN };
  const mid = Math.floor(v.length / 2);
  return { min: v[0]!, median: v.length % 2 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2, max: v.at(-1)! };
}

/** "median (min-max)" with `digits` decimals. */
export function showSpread(s: Spread, digits = 2): string {
  return `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}-${s.max.toFixed(digits)})`;
}

/** The global PSNR x264 prints with --psnr ("PSNR Mean Y:... Global:43.707 kb/s:..."), or NaN. */
export function x264GlobalPsnr(stderr: string): number {
  const m = /PSNR Mean .*Global:\s*([\d.]+)/.exec(stderr);
  return m ? Number(m[1]) : NaN;
}

/** Access units cut into consecutive runs of `counts[i]` pictures (a band stream cut like the shared segments). */
export function cutPictures<T>(pictures: readonly T[], counts: readonly number[]): T[][] {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total !== pictures.length) throw new Error(`the segments hold ${total} pictures, the stream ${pictures.length}`);
  let at = 0;
  return counts.map((n) => {
    at += n;
    return pictures.slice(at - n, at);
  });
}

/**
 * The gate on one spliced segment: outside the band its frames (framemd5 lists, one per region) equal the shared
 * segment's, inside they equal the band stream's, and neither list is empty. The reasons it fails, or none.
 */
export function gateFindings(got: { outside: string[][]; inside: string[] }, want: { outside: string[][]; inside: string[] }): string[] {
  const findings: string[] = [];
  const differ = (a: string[], b: string[]) => a.length !== b.length || a.some((x, i) => x !== b[i]);
  got.outside.forEach((frames, i) => {
    if (frames.length === 0 || differ(frames, want.outside[i] ?? [])) findings.push(`region ${i} outside the band differs from the shared encode`);
  });
  if (got.inside.length === 0 || differ(got.inside, want.inside)) findings.push('the band differs from the band stream');
  return findings;
}

/** The sum of a counter's samples over all its labels in Prometheus' text format (`GET /metrics`); 0 when absent. */
export function metricTotal(text: string, name: string): number {
  let total = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{[^}]*\})?\s+(\S+)/.exec(line);
    if (m && m[1] === name) total += Number(m[2]);
  }
  return total;
}
