// Unit tests for expiration inputs: the CLI's --expiration flag and the API body's `expiration` field.
import { describe, expect, it } from 'vitest';
import { type ExpirationResult, parseExpirationField, parseExpirationInput } from '../../../src/core/expiration.js';

// 2027-01-15T08:00:00.250Z: a fractional second checks that durations round up.
const NOW = Date.UTC(2027, 0, 15, 8, 0, 0, 250);
const NOW_S = NOW / 1000;

function seconds(result: ExpirationResult): number {
  if (!result.ok) throw new Error(`expected ok, got: ${result.message}`);
  return result.unixSeconds;
}

function failure(result: ExpirationResult): { message: string; hint?: string } {
  if (result.ok) throw new Error(`expected an error, got ${result.unixSeconds}`);
  return result;
}

describe('parseExpirationInput', () => {
  it('accepts Unix seconds', () => {
    expect(seconds(parseExpirationInput('1900000000', NOW))).toBe(1_900_000_000);
    expect(seconds(parseExpirationInput(' 1900000000 ', NOW))).toBe(1_900_000_000);
  });

  it('refuses numbers that look like milliseconds, with a hint in seconds', () => {
    const error = failure(parseExpirationInput('1900000000000', NOW));
    expect(error.message).toMatch(/milliseconds/);
    expect(error.hint).toContain('1900000000');
  });

  it('accepts ISO 8601 dates and date-times', () => {
    expect(seconds(parseExpirationInput('2030-01-01', NOW))).toBe(Date.UTC(2030, 0, 1) / 1000);
    expect(seconds(parseExpirationInput('2030-01-01T12:30:00Z', NOW))).toBe(Date.UTC(2030, 0, 1, 12, 30) / 1000);
    expect(seconds(parseExpirationInput('2030-01-01t12:30:00z', NOW))).toBe(Date.UTC(2030, 0, 1, 12, 30) / 1000);
    expect(seconds(parseExpirationInput('2030-01-01T12:30:00+02:00', NOW))).toBe(Date.UTC(2030, 0, 1, 10, 30) / 1000);
    expect(seconds(parseExpirationInput('2030-01-01T12:30:00+0200', NOW))).toBe(Date.UTC(2030, 0, 1, 10, 30) / 1000);
    expect(seconds(parseExpirationInput('2030-01-01 12:30Z', NOW))).toBe(Date.UTC(2030, 0, 1, 12, 30) / 1000);
    expect(seconds(parseExpirationInput('2030-01-01T12:30:00.500Z', NOW))).toBe(Date.UTC(2030, 0, 1, 12, 30) / 1000 + 0.5);
    // No offset means local time, as in Date.parse.
    expect(seconds(parseExpirationInput('2030-01-01T12:30', NOW))).toBe(new Date(2030, 0, 1, 12, 30).getTime() / 1000);
  });

  it('refuses impossible calendar dates and times instead of rolling them over', () => {
    for (const input of ['2030-02-30', '2030-13-01', '2030-00-10', '2030-01-01T24:00:00Z', '2030-01-01T12:60Z']) {
      expect(failure(parseExpirationInput(input, NOW)).message, input).toMatch(/not a valid date/);
    }
    expect(seconds(parseExpirationInput('2028-02-29', NOW))).toBe(Date.UTC(2028, 1, 29) / 1000);
  });

  it('refuses date-like text without a full date', () => {
    for (const input of ['12:30', 'January 1 2030', '2030', '2030-01', 'tomorrow', 'Tue, 01 Jan 2030 00:00:00 GMT']) {
      expect(parseExpirationInput(input, NOW).ok, input).toBe(false);
    }
  });

  it('accepts durations from now, rounded up to whole seconds', () => {
    const cases: Array<[string, number]> = [
      ['30s', 30],
      ['15m', 15 * 60],
      ['12h', 12 * 3600],
      ['7d', 7 * 86400],
      ['2w', 14 * 86400],
      ['1d12h', 36 * 3600],
      ['1h30m15s', 5415],
    ];
    for (const [input, offset] of cases) {
      expect(seconds(parseExpirationInput(input, NOW)), input).toBe(Math.ceil(NOW_S + offset));
    }
    expect(Number.isInteger(seconds(parseExpirationInput('30s', NOW)))).toBe(true);
    // The same duration grammar as --timeout: fractions are fine.
    expect(seconds(parseExpirationInput('1.5h', NOW))).toBe(Math.ceil(NOW_S + 5400));
  });

  it('refuses zero, repeated-unit and unknown-unit durations', () => {
    expect(failure(parseExpirationInput('0s', NOW)).message).toMatch(/future/);
    expect(failure(parseExpirationInput('0d0h', NOW)).message).toMatch(/future/);
    expect(failure(parseExpirationInput('1h1h', NOW)).message).toMatch(/repeats/);
    for (const input of ['5y', '3M', '10 minutes', '-5m', 'h', '5']) {
      const result = parseExpirationInput(input, NOW);
      if (input === '5') {
        // A bare number is Unix seconds, here long past.
        expect(failure(result).message).toMatch(/future/);
      } else {
        expect(result.ok, input).toBe(false);
      }
    }
  });

  it('refuses times in the past or now', () => {
    expect(failure(parseExpirationInput('1700000000', NOW)).message).toMatch(/not in the future/);
    expect(failure(parseExpirationInput('2020-01-01', NOW)).message).toMatch(/not in the future/);
    expect(failure(parseExpirationInput(String(Math.floor(NOW_S)), NOW)).message).toMatch(/not in the future/);
    expect(failure(parseExpirationInput('0', NOW)).message).toMatch(/expected Unix time in seconds/);
  });

  it('refuses more than 10 years ahead', () => {
    expect(seconds(parseExpirationInput('520w', NOW))).toBeGreaterThan(NOW_S);
    expect(failure(parseExpirationInput('600w', NOW)).message).toMatch(/10 years/);
    expect(failure(parseExpirationInput('2099-01-01', NOW)).message).toMatch(/10 years/);
    expect(failure(parseExpirationInput('99999999999', NOW)).message).toMatch(/10 years/);
  });

  it('refuses garbage with the accepted forms as a hint', () => {
    for (const input of ['', '   ', 'soon', 'NaN', 'Infinity', '1e10', '0x70000000', '1900000000.5', '--expiration']) {
      const error = failure(parseExpirationInput(input, NOW));
      expect(error.message, input).toMatch(/^--expiration: /);
    }
    expect(failure(parseExpirationInput('soon', NOW)).hint).toMatch(/Unix seconds.*ISO 8601.*duration/);
  });
});

describe('parseExpirationField', () => {
  it('accepts Unix seconds as an integer or a fraction', () => {
    expect(seconds(parseExpirationField(1_900_000_000, NOW))).toBe(1_900_000_000);
    expect(seconds(parseExpirationField(1_900_000_000.75, NOW))).toBe(1_900_000_000.75);
  });

  it('accepts an ISO 8601 string for convenience', () => {
    expect(seconds(parseExpirationField('2030-01-01T00:00:00Z', NOW))).toBe(Date.UTC(2030, 0, 1) / 1000);
  });

  it('refuses milliseconds with a hint', () => {
    const error = failure(parseExpirationField(1_900_000_000_000, NOW));
    expect(error.message).toBe('expiration: 1900000000000 looks like milliseconds; expected Unix time in seconds');
    expect(error.hint).toBe('did you mean 1900000000?');
  });

  it('refuses past, non-finite, zero and negative numbers', () => {
    expect(failure(parseExpirationField(1_700_000_000, NOW)).message).toMatch(/^expiration: .*not in the future/);
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY, 0, -1]) {
      expect(failure(parseExpirationField(value, NOW)).message).toBe(`expiration: expected Unix time in seconds, got ${value}`);
    }
  });

  it('refuses other types with a message naming what it got', () => {
    const cases: Array<[unknown, string]> = [
      [null, 'null'],
      [undefined, 'undefined'],
      [true, 'boolean'],
      [{}, 'an object'],
      [[1], 'an array'],
    ];
    for (const [value, got] of cases) {
      expect(failure(parseExpirationField(value, NOW)).message).toBe(`expiration: expected Unix time in seconds, got ${got}`);
    }
  });

  it('refuses strings that are not ISO 8601, including durations and numeric strings', () => {
    for (const value of ['7d', '1900000000', 'tomorrow', '', '2030-02-30']) {
      expect(failure(parseExpirationField(value, NOW)).message, value).toMatch(
        /^expiration: expected Unix time in seconds \(a number\) or an ISO 8601 date\/time, got string /,
      );
    }
  });

  it('refuses more than 10 years ahead', () => {
    expect(failure(parseExpirationField(NOW_S + 11 * 365 * 86400, NOW)).message).toMatch(/10 years/);
  });
});
