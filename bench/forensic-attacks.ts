// The forensic bench's attacks on a viewer's copy (F1): each is one branch of a per-payload ffmpeg (the viewer's copy is
// decoded once for all of them); which viewer each runs on, and which more fit in the time budget. Pure: the leaks are
// made and detected in bench/forensic-attack-leaks.ts.

import { FFMPEG_QUIET } from './lib/ffmpeg-args.js';
import { even, x264 } from './lib/forensic-media.js';

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
    ...FFMPEG_QUIET,
    '-threads',
    String(threads),
    ...(window ? ['-ss', window.start.toFixed(3), '-t', window.duration.toFixed(3)] : []),
    '-i',
    input,
    '-filter_complex',
    graph,
    ...branches.flatMap((b, i) => ['-map', `[${labels[i]}]`, ...x264(b.crf, threads), ...(b.extra ?? []), b.out]),
  ];
}

/** How F1's full-resolution attacks are spread: 'all' on every viewer, else each on one (attack j on viewer j mod N). */
export type FullAttacks = 'all' | 'rotate' | 'auto';

/** Which attacks run on each viewer in the first round (with fewer viewers than attacks, some get two). */
export function attackPlan(payloads: number[], fullAttacks: FullAttacks): { payload: number; attacks: Attack[] }[] {
  const fullRes = ATTACKS.filter((a) => !a.downscaled);
  return payloads.map((u, pi) => ({
    payload: u,
    attacks: ATTACKS.filter((a) => a.downscaled || fullAttacks === 'all' || fullRes.indexOf(a) % payloads.length === pi),
  }));
}

/** Units of attack work in one ffmpeg: one full-size encode each (a downscaled one by its pixels), the decode 0.3. */
const attackUnits = (attacks: Attack[]) => 0.3 + attacks.reduce((a, x) => a + x.scale ** 2, 0);

/** One ffmpeg of the first round: the attacks it encoded and its wall time. */
export interface AttackBatch {
  attacks: Attack[];
  wallS: number;
}

/** A full-resolution attack on one viewer that the first round left out, with what it would cost (s). */
export interface AttackCell {
  pi: number;
  u: number;
  a: Attack;
  cost: number;
}

/**
 * The cells the first round left out, cheapest first. Cost of one: its batch's wall time minus the shared part (decode
 * + downscaled encodes, priced from the cheapest batch's seconds per unit), plus its detect time (`detectS`, 30 s when
 * unknown). With --reuse the first round may have encoded nothing: then a rough 20 s per unit.
 */
export function remainingCells(
  plan: { payload: number; attacks: Attack[] }[],
  batches: AttackBatch[],
  detectS: (attackId: string) => number | undefined,
): { cells: AttackCell[]; unit: number } {
  const unit = batches.length ? Math.min(...batches.map((b) => b.wallS / attackUnits(b.attacks))) : 20;
  const shared = (b: AttackBatch) => unit * attackUnits(b.attacks.filter((a) => a.downscaled));
  const cost = (a: Attack) => {
    const b = batches.find((x) => x.attacks.includes(a));
    return (b ? Math.max(unit * 0.5, b.wallS - shared(b)) : unit * 3) + (detectS(a.id) ?? 30);
  };
  const fullRes = ATTACKS.filter((a) => !a.downscaled);
  const cells = plan.flatMap(({ payload: u, attacks }, pi) => fullRes.filter((a) => !attacks.includes(a)).map((a) => ({ pi, u, a, cost: cost(a) })));
  cells.sort((x, y) => x.cost - y.cost || x.pi - y.pi);
  return { cells, unit };
}

/**
 * The next batch within `leftS` seconds: the cheapest cells over all viewers that fit (a viewer's copy is decoded once
 * per batch, `unit * 0.3`), of which one viewer's share runs; undefined when none fits.
 */
export function nextBatch(cells: AttackCell[], leftS: number, unit: number): { batch: AttackCell[]; total: number } | undefined {
  let total = 0;
  const touched = new Set<number>();
  const selected = cells.filter((c) => {
    const extra = c.cost + (touched.has(c.pi) ? 0 : unit * 0.3);
    if (total + extra > leftS) return false;
    total += extra;
    touched.add(c.pi);
    return true;
  });
  const first = selected[0];
  if (!first) return undefined;
  const batch = selected.filter((c) => c.pi === first.pi);
  return { batch, total: unit * 0.3 + batch.reduce((acc, c) => acc + c.cost, 0) };
}
