// The forensic bench's --only: which parts a run measures.
import { describe, expect, it } from 'vitest';
import { PARTS, parseOnly, wants } from '../lib/forensic-parts.js';

describe('forensic bench --only', () => {
  it('runs every target by default, but not the step-by-step diagnostic', () => {
    const only = parseOnly(undefined);
    expect(only).toBeNull();
    expect(PARTS.filter((p) => wants(only, p))).toEqual(['f1', 'f2', 'f3', 'f4', 'f5', 'f6', 'f7', 'f8', 'f2b', 'f9', 'f10', 'f7b', 'f6b']);
  });

  it("runs just the parts named, in any case, with F2'-style names accepted", () => {
    const only = parseOnly(" F9, f6,F6',f9s ");
    expect(PARTS.filter((p) => wants(only, p))).toEqual(['f6', 'f9', 'f9s', 'f6b']);
  });

  it('refuses unknown parts and an empty list, naming the parts there are', () => {
    expect(() => parseOnly('f9,f12')).toThrow(/unknown part\(s\) f12; parts: f1, f2/);
    expect(() => parseOnly(',')).toThrow(/none given/);
    expect(() => parseOnly(true)).toThrow(/comma-separated list/);
  });
});
