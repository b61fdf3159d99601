// The forensic bench's F1 plan: which attacks run on which viewer, what the ffmpeg that makes them is given, and which
// left-out cells fit in the time budget.
import { describe, expect, it } from 'vitest';
import { ATTACKS, type AttackCell, attackPlan, multiOutputArgs, nextBatch, remainingCells } from '../forensic-attacks.js';

const ids = (plan: ReturnType<typeof attackPlan>) => plan.map((p) => p.attacks.map((a) => a.id));
const downscaled = ATTACKS.filter((a) => a.downscaled).map((a) => a.id);
const fullRes = ATTACKS.filter((a) => !a.downscaled).map((a) => a.id);

describe('forensic bench attacks', () => {
  it('runs the downscaled attacks on every viewer and each full-resolution one on one viewer in turn, or all of them on all', () => {
    const rotate = ids(attackPlan([11, 22, 33], 'rotate'));
    expect(rotate.map((a) => a.filter((id) => downscaled.includes(id)))).toEqual([downscaled, downscaled, downscaled]);
    // Five full-resolution attacks over three viewers: 0, 3 on the first; 1, 4 on the second; 2 on the third.
    expect(rotate.map((a) => a.filter((id) => fullRes.includes(id)))).toEqual([[fullRes[0], fullRes[3]], [fullRes[1], fullRes[4]], [fullRes[2]]]);
    expect(ids(attackPlan([11, 22], 'all'))).toEqual([ATTACKS.map((a) => a.id), ATTACKS.map((a) => a.id)]);
    expect(attackPlan([11, 22], 'auto')).toEqual(attackPlan([11, 22], 'rotate'));
  });

  it('decodes the copy once and encodes one output per branch, split only when there are several', () => {
    const two = multiOutputArgs(
      'in.mp4',
      [
        { filter: 'scale=160:90', out: 'a.mp4', crf: 30 },
        { filter: '', out: 'b.mp4', crf: 23, extra: ['-r', '25'] },
      ],
      2,
      {
        start: 12.5,
        duration: 60,
      },
    );
    expect(two.filter((a) => a === '-i')).toHaveLength(1);
    expect(two.slice(two.indexOf('-ss'), two.indexOf('-ss') + 4)).toEqual(['-ss', '12.500', '-t', '60.000']);
    expect(two[two.indexOf('-filter_complex') + 1]).toBe('[0:v]split=2[so0][so1];[so0]scale=160:90[o0];[so1]null[o1]');
    expect(two.slice(two.indexOf('[o1]') - 1)).toEqual(expect.arrayContaining(['-crf', '23', '-r', '25', 'b.mp4']));
    const one = multiOutputArgs('in.mp4', [{ filter: 'hflip', out: 'a.mp4', crf: 23 }], 1);
    expect(one[one.indexOf('-filter_complex') + 1]).toBe('[0:v]hflip[o0]');
    expect(one).not.toContain('-ss');
  });

  it('prices the left-out cells from the first round and takes the cheapest that fit, one viewer at a time', () => {
    const plan = attackPlan([11, 22], 'rotate');
    // Both batches cost 10 s per unit of work: a downscaled attack is 0.25 or 0.0625 of a full-size encode.
    const batches = plan.map((p) => ({ attacks: p.attacks, wallS: 10 * (0.3 + p.attacks.reduce((a, x) => a + x.scale ** 2, 0)) }));
    const { cells, unit } = remainingCells(plan, batches, (id) => (id === fullRes[0] ? 5 : undefined));
    expect(unit).toBeCloseTo(10);
    // Each viewer lacks the full-resolution attacks the other one ran: 5 cells in all.
    expect(cells).toHaveLength(5);
    expect(cells.map((c) => c.cost)).toEqual([...cells.map((c) => c.cost)].sort((a, b) => a - b));
    // Priced by its first-round batch's full-resolution part (the first viewer's three encodes, 30 s) plus its detect:
    // the one detected in 5 s is the cheapest, the others' detects count 30 s.
    expect(cells[0]).toMatchObject({ a: { id: fullRes[0] }, cost: 35 });
    expect(cells.map((c) => c.cost)).toEqual([35, 50, 50, 60, 60]);
    const next = nextBatch(cells, 120, unit);
    expect(next?.batch.every((c) => c.pi === cells[0]!.pi)).toBe(true);
    expect(next?.total).toBeCloseTo(3 + next!.batch.reduce((a, c) => a + c.cost, 0));
    expect(nextBatch(cells, 37, unit)).toBeUndefined();
  });

  it('counts the decode once per viewer when choosing what fits', () => {
    const cell = (pi: number, cost: number): AttackCell => ({ pi, u: pi, a: ATTACKS[3]!, cost });
    // 10 + 3 (decode) fits in 14; a second cell of the same viewer adds only its 1 s.
    expect(nextBatch([cell(0, 10), cell(0, 1)], 14, 10)?.batch).toHaveLength(2);
    // Another viewer's cell would need its own decode: it does not fit, and the batch is the first viewer's.
    expect(nextBatch([cell(0, 10), cell(1, 1)], 14, 10)?.batch.map((c) => c.pi)).toEqual([0]);
  });
});
