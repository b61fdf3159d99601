// The forensic bench's attacks on a viewer's copy (F1): each is one branch of a per-payload ffmpeg (the viewer's copy is
// decoded once for all of them).
export interface Attack {
  id: string;
  label: string;
  /** Filter chain on the decoded viewer copy (no leading/trailing label), '' for none. */
  filter: (w: number, h: number) => string;
  crf: number;
  extra?: string[];
  /** Output picture is smaller than the original (cheap to encode and to decode). */
  downscaled: boolean;
  /** Linear size of the output relative to the original. */
  scale: number;
}

export const even = (v: number) => Math.max(2, Math.round(v / 2) * 2);

export const ATTACKS: Attack[] = [
  { id: 'crf30-half', label: 'CRF 30 + 0.5x', filter: (w, h) => `scale=${even(w / 2)}:${even(h / 2)}`, crf: 30, downscaled: true, scale: 0.5 },
  { id: 'crf35-half', label: 'CRF 35 + 0.5x', filter: (w, h) => `scale=${even(w / 2)}:${even(h / 2)}`, crf: 35, downscaled: true, scale: 0.5 },
  { id: 'quarter', label: '0.25x (CRF 23)', filter: (w, h) => `scale=${even(w / 4)}:${even(h / 4)}`, crf: 23, downscaled: true, scale: 0.25 },
  { id: 'eq-plus', label: 'contrast/bright +15%', filter: () => 'eq=contrast=1.15:brightness=0.04', crf: 23, downscaled: false, scale: 1 },
  { id: 'eq-minus', label: 'contrast/bright -15%', filter: () => 'eq=contrast=0.85:brightness=-0.04', crf: 23, downscaled: false, scale: 1 },
  { id: 'fps25', label: '25 fps (CRF 23)', filter: () => '', crf: 23, extra: ['-r', '25'], downscaled: false, scale: 1 },
  { id: 'blur-noise', label: 'blur 1.5 + noise 10', filter: () => 'gblur=sigma=1.5,noise=alls=10:allf=t', crf: 23, downscaled: false, scale: 1 },
  {
    id: 'crop8',
    label: '8% crop, rescaled',
    // 92 % of each axis, off-centre (75 % of the slack on the left, 20 % on top), scaled back to the original size.
    filter: (w, h) => `crop=${even(w * 0.92)}:${even(h * 0.92)}:${even(w * 0.08 * 0.75)}:${even(h * 0.08 * 0.2)},scale=${w}:${h}`,
    crf: 23,
    downscaled: false,
    scale: 1,
  },
];

export function x264(crf: number, threads: number): string[] {
  return ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', String(crf), '-pix_fmt', 'yuv420p', '-threads', String(threads)];
}

/** One ffmpeg: decode `input` once (optionally a time window), one encoded output per branch. */
export function multiOutputArgs(
  input: string,
  branches: { filter: string; out: string; crf: number; extra?: string[] }[],
  threads: number,
  window?: { start: number; duration: number },
): string[] {
  const labels = branches.map((_, i) => `o${i}`);
  const split = branches.length > 1 ? `[0:v]split=${branches.length}${labels.map((l) => `[s${l}]`).join('')};` : '';
  const graph =
    split +
    branches
      .map((b, i) => {
        const src = branches.length > 1 ? `[s${labels[i]}]` : '[0:v]';
        return `${src}${b.filter || 'null'}[${labels[i]}]`;
      })
      .join(';');
  return [
    '-hide_banner',
    '-nostdin',
    '-loglevel',
    'error',
    '-y',
    '-threads',
    String(threads),
    ...(window ? ['-ss', window.start.toFixed(3), '-t', window.duration.toFixed(3)] : []),
    '-i',
    input,
    '-filter_complex',
    graph,
    ...branches.flatMap((b, i) => ['-map', `[${labels[i]}]`, '-an', ...x264(b.crf, threads), ...(b.extra ?? []), b.out]),
  ];
}
