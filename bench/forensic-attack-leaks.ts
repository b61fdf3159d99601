// The forensic bench's F1: every viewer's copy attacked with plain ffmpeg (bench/forensic-attacks.ts), each leak
// detected in-process; the first round pipelined (the next viewer's encodes run while this one's leaks are detected),
// then the full-resolution cells left out, while the time budget allows.
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ATTACKS, type Attack, type AttackBatch, attackPlan, multiOutputArgs, nextBatch, remainingCells } from './forensic-attacks.js';
import { detectKeepingFrames, type LeakOutcome } from './forensic-detect.js';
import type { ForensicRun, Title, Viewer } from './forensic-setup.js';
import { ffmpeg } from './lib/forensic-media.js';
import { fmt } from './lib/suite.js';

export type AttackOutcome = LeakOutcome & { attack: string };

export class AttackLeaks {
  readonly f1: AttackOutcome[] = [];
  /** Wall seconds of each attack ffmpeg. */
  readonly attackWall: number[] = [];
  /** Cells (attack/payload) the budget left out. */
  readonly skipped: string[] = [];
  private readonly batches: AttackBatch[] = [];
  private readonly plan: { payload: number; attacks: Attack[] }[];

  constructor(
    private readonly run: ForensicRun,
    private readonly title: Title,
    private readonly viewers: Viewer[],
  ) {
    this.plan = attackPlan(
      viewers.map((v) => v.payload),
      run.o.fullAttacks,
    );
  }

  private leakFile(u: number, a: string): string {
    return path.join(this.run.leakDir, `p${u}-${a}.mp4`);
  }

  /** One ffmpeg: viewer `pi`'s copy decoded once, one leak per attack. */
  private async encode(pi: number, attacks = this.plan[pi]!.attacks): Promise<void> {
    const { run } = this;
    const { width, height, threads } = run.o;
    const { payload } = this.plan[pi]!;
    const branches = attacks.map((a) => ({ filter: a.filter(width, height), out: this.leakFile(payload, a.id), crf: a.crf, extra: a.extra }));
    if (run.o.reuse && branches.every((b) => existsSync(b.out))) return;
    run.log(`[${run.elapsed()}] attacks on viewer ${payload}: ${attacks.map((a) => a.id).join(', ')} ...`);
    const r = await ffmpeg(run.ff, multiOutputArgs(this.viewers[pi]!.mp4, branches, threads));
    this.attackWall.push(r.wallS);
    this.batches.push({ attacks, wallS: r.wallS });
    run.log(`  attacks on viewer ${payload}: ${r.wallS.toFixed(1)} s`);
  }

  private async detect(pi: number, attacks = this.plan[pi]!.attacks): Promise<void> {
    const { payload } = this.plan[pi]!;
    for (const a of attacks) {
      const file = this.leakFile(payload, a.id);
      const o = await detectKeepingFrames(this.title, `${a.id}/${payload}`, file, [payload]);
      this.f1.push({ ...o, attack: a.id });
      this.run.log(
        `  detect ${a.id} / ${payload}: ${o.verdict}, z ${fmt(o.trueZ[0]!)} rank ${o.trueRank[0]} (best ${o.best} z ${fmt(o.bestZ)}), ${o.segmentsRead} segments, ${o.detectS.toFixed(1)} s`,
      );
      if (!a.downscaled && !this.run.keep) await rm(file, { force: true });
    }
  }

  /** The first round: payload i+1's attack encodes run while payload i's leaks are detected. */
  async firstRound(): Promise<void> {
    if (!this.run.want('f1')) return;
    await this.encode(0);
    for (let pi = 0; pi < this.plan.length; pi++) {
      await Promise.all([this.detect(pi), pi + 1 < this.plan.length ? this.encode(pi + 1) : Promise.resolve()]);
    }
  }

  /** With --full-attacks auto: the full-resolution cells the first round left out, cheapest first, while the budget allows. */
  async spendBudget(): Promise<void> {
    const { run } = this;
    if (run.o.fullAttacks !== 'auto' || !run.want('f1')) return;
    const remaining = remainingCells(this.plan, this.batches, (id) => this.f1.find((o) => o.attack === id)?.detectS);
    let { cells } = remaining;
    for (;;) {
      const leftS = run.o.budgetMin * 60 - (performance.now() - run.suiteT0) / 1000 - 90;
      const next = nextBatch(cells, leftS, remaining.unit);
      if (!next) break;
      const first = next.batch[0]!;
      const attacks = next.batch.map((c) => c.a);
      run.log(
        `  budget: ${Math.round(leftS)} s left; ${attacks.length} more full-resolution attack(s) on viewer ${first.u} (about ${Math.round(next.total)} s)`,
      );
      this.plan[first.pi]!.attacks.push(...attacks);
      await this.encode(first.pi, attacks);
      await this.detect(first.pi, attacks);
      cells = cells.filter((c) => !next.batch.includes(c));
    }
    this.skipped.push(...cells.map((c) => `${c.a.id}/${c.u}`));
    if (cells.length) run.log(`  ${cells.length} full-resolution cell(s) not run within the ${run.o.budgetMin}-min budget: ${this.skipped.join(', ')}`);
  }

  /** The leaks in report order: by attack, then by viewer. */
  sorted(): AttackOutcome[] {
    const payloads = this.plan.map((p) => p.payload);
    return this.f1.sort(
      (a, b) =>
        ATTACKS.findIndex((x) => x.id === a.attack) - ATTACKS.findIndex((x) => x.id === b.attack) ||
        payloads.indexOf(a.truth[0]!) - payloads.indexOf(b.truth[0]!),
    );
  }
}
