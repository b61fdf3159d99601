// Unit tests for batch files (`wmark watermark --batch`): RFC 4180 CSV and NDJSON, with errors that name the line.
import { describe, expect, it } from 'vitest';
import { type BatchRow, parseBatch, parseCsv } from '../../../src/core/batch-file.js';
import type { Result } from '../../../src/core/issue-text.js';

function rows(r: Result<BatchRow[]>): BatchRow[] {
  if (!r.ok) throw new Error(`expected rows, got issues:\n${r.issues.join('\n')}`);
  return r.value;
}

function issues(r: Result<BatchRow[]>): string[] {
  if (r.ok) throw new Error(`expected issues, got ${JSON.stringify(r.value)}`);
  return r.issues;
}

describe('parseCsv', () => {
  it('splits plain records and fields', () => {
    expect(parseCsv('a,b\n1,2\n')).toEqual([
      { line: 1, fields: ['a', 'b'] },
      { line: 2, fields: ['1', '2'] },
    ]);
  });

  it('reads quoted fields holding commas, doubled quotes and newlines', () => {
    const text = 'name,note\n"Doe, Jane","She said ""hi""\nand left"\nbob,"x"\n';
    expect(parseCsv(text)).toEqual([
      { line: 1, fields: ['name', 'note'] },
      { line: 2, fields: ['Doe, Jane', 'She said "hi"\nand left'] },
      { line: 4, fields: ['bob', 'x'] },
    ]);
  });

  it('keeps empty fields, including quoted empty ones and trailing ones', () => {
    expect(parseCsv('a,b,c\n,,\n"",x,\n')).toEqual([
      { line: 1, fields: ['a', 'b', 'c'] },
      { line: 2, fields: ['', '', ''] },
      { line: 3, fields: ['', 'x', ''] },
    ]);
  });

  it('accepts CRLF, LF and CR line ends and a last line without one', () => {
    const expected = [
      { line: 1, fields: ['a', 'b'] },
      { line: 2, fields: ['1', '2'] },
      { line: 3, fields: ['3', '4'] },
    ];
    expect(parseCsv('a,b\r\n1,2\r\n3,4\r\n')).toEqual(expected);
    expect(parseCsv('a,b\r1,2\r3,4')).toEqual(expected);
    expect(parseCsv('a,b\n1,2\n3,4')).toEqual(expected);
  });

  it('keeps a CRLF inside a quoted field as data and counts its line', () => {
    expect(parseCsv('a,b\r\n"x\r\ny",2\r\nz,3\r\n')).toEqual([
      { line: 1, fields: ['a', 'b'] },
      { line: 2, fields: ['x\r\ny', '2'] },
      { line: 4, fields: ['z', '3'] },
    ]);
  });

  it('ignores a BOM and blank lines, keeping the real line numbers', () => {
    expect(parseCsv('\uFEFFname\n\nalice\n\n\nbob\n')).toEqual([
      { line: 1, fields: ['name'] },
      { line: 3, fields: ['alice'] },
      { line: 6, fields: ['bob'] },
    ]);
  });

  it('keeps a line that is one quoted empty field', () => {
    expect(parseCsv('name\n""\n')).toEqual([
      { line: 1, fields: ['name'] },
      { line: 2, fields: [''] },
    ]);
  });

  it('keeps spaces and Unicode in fields as they are', () => {
    expect(parseCsv('name\n  Zoë  Ålander \n"日本, 語"\n')).toEqual([
      { line: 1, fields: ['name'] },
      { line: 2, fields: ['  Zoë  Ålander '] },
      { line: 3, fields: ['日本, 語'] },
    ]);
  });

  it('rejects an unterminated quote, naming the line it started on', () => {
    expect(() => parseCsv('name,email\nalice,a@x\n"bob,b@x\ncarol,c@x\n')).toThrow(/^line 3: unterminated quoted field$/);
  });
});

describe('parseBatch: CSV', () => {
  it('maps each row to the header names with 1-based line numbers', () => {
    expect(rows(parseBatch('name,email\nAlice,alice@example.com\nBob,bob@example.com\n'))).toEqual([
      { line: 2, mappings: { name: 'Alice', email: 'alice@example.com' } },
      { line: 3, mappings: { name: 'Bob', email: 'bob@example.com' } },
    ]);
  });

  it('reads quoted values with commas, quotes and newlines, after a BOM with CRLF line ends', () => {
    const text = '\uFEFFname,email,note\r\n"Doe, Jane",jane@example.com,"says ""hi""\r\ntwice"\r\nBob,bob@example.com,\r\n';
    expect(rows(parseBatch(text))).toEqual([
      { line: 2, mappings: { name: 'Doe, Jane', email: 'jane@example.com', note: 'says "hi"\r\ntwice' } },
      { line: 4, mappings: { name: 'Bob', email: 'bob@example.com', note: '' } },
    ]);
  });

  it('trims header names but not values', () => {
    expect(rows(parseBatch(' name , email \n Al , a@x \n', 'csv'))).toEqual([{ line: 2, mappings: { name: ' Al ', email: ' a@x ' } }]);
  });

  it('reports every ragged row with its line number and the expected columns', () => {
    const text = 'name,email\nAlice,a@x\nBob\nCarol,c@x,extra\n"Dan\nDoe",d@x,more\nEve,e@x\n';
    expect(issues(parseBatch(text))).toEqual([
      'batch line 3: expected 2 fields (name, email), got 1',
      'batch line 4: expected 2 fields (name, email), got 3',
      'batch line 5: expected 2 fields (name, email), got 3',
    ]);
  });

  it('rejects empty and duplicate header names', () => {
    expect(issues(parseBatch('name,,email\na,b,c\n'))).toEqual(['batch line 1: column 2 has no name']);
    expect(issues(parseBatch('name,email,name\na,b,c\n'))).toEqual(['batch line 1: column "name" appears twice']);
    // Names are compared after trimming.
    expect(issues(parseBatch('name, name\na,b\n'))).toEqual(['batch line 1: column "name" appears twice']);
    expect(issues(parseBatch('name,email,\na,b,\n'))).toEqual(['batch line 1: column 3 has no name']);
  });

  it('reports header problems and ragged rows together', () => {
    expect(issues(parseBatch('name,name\nx\n'))).toEqual(['batch line 1: column "name" appears twice', 'batch line 2: expected 2 fields (name, name), got 1']);
  });

  it('rejects an empty file, a header without rows and an unterminated quote', () => {
    expect(issues(parseBatch(''))).toEqual(['batch: the file is empty (expected a header row of placeholder names)']);
    expect(issues(parseBatch('\uFEFF\r\n\r\n'))).toEqual(['batch: the file is empty (expected a header row of placeholder names)']);
    expect(issues(parseBatch('name,email\n'))).toEqual(['batch: no rows after the header']);
    expect(issues(parseBatch('name\n"open\n'))).toEqual(['batch: line 2: unterminated quoted field']);
  });

  it('keeps text that looks like placeholders or JSON inside CSV values verbatim', () => {
    expect(rows(parseBatch('name\n"{""a"":1}"\n%other%\n', 'csv'))).toEqual([
      { line: 2, mappings: { name: '{"a":1}' } },
      { line: 3, mappings: { name: '%other%' } },
    ]);
  });
});

describe('parseBatch: NDJSON', () => {
  it('reads one object of string values per line, skipping blank lines', () => {
    const text = '{"name":"Alice","email":"a@x"}\n\n{"name":"Bob \\"B\\"\\nline2","email":"b@x"}\r\n   \n';
    expect(rows(parseBatch(text))).toEqual([
      { line: 1, mappings: { name: 'Alice', email: 'a@x' } },
      { line: 3, mappings: { name: 'Bob "B"\nline2', email: 'b@x' } },
    ]);
  });

  it('reads a file with a BOM', () => {
    expect(rows(parseBatch('\uFEFF{"name":"Zoë"}\n'))).toEqual([{ line: 1, mappings: { name: 'Zoë' } }]);
  });

  it('reports every invalid line with its number', () => {
    const text = '{"name":"ok"}\n{"name":\n[1,2]\n"str"\nnull\n{"name":"ok2"}\n';
    const found = issues(parseBatch(text));
    expect(found).toHaveLength(4);
    expect(found[0]).toMatch(/^batch line 2: invalid JSON: /);
    expect(found.slice(1)).toEqual([
      'batch line 3: expected an object of placeholder values',
      'batch line 4: expected an object of placeholder values',
      'batch line 5: expected an object of placeholder values',
    ]);
  });

  it('rejects non-string values, naming the key, the value and the line', () => {
    const text = '{"name":"a","n":1}\n{"name":null,"ok":"x","flag":true,"o":{"x":"y"},"l":["z"]}\n';
    expect(issues(parseBatch(text))).toEqual([
      'batch line 1: "n" must be a string, got 1',
      'batch line 2: "name" must be a string, got null',
      'batch line 2: "flag" must be a string, got true',
      'batch line 2: "o" must be a string, got {"x":"y"}',
      'batch line 2: "l" must be a string, got ["z"]',
    ]);
  });

  it('rejects a file without rows', () => {
    expect(issues(parseBatch('\n  \n', 'ndjson'))).toEqual(['batch: no rows']);
  });
});

describe('parseBatch: format detection', () => {
  it('treats text starting with "{" (after a BOM and whitespace) as NDJSON', () => {
    expect(rows(parseBatch('{"name":"a"}\n'))).toEqual([{ line: 1, mappings: { name: 'a' } }]);
    expect(rows(parseBatch('\uFEFF \n {"name":"a"}\n'))).toEqual([{ line: 2, mappings: { name: 'a' } }]);
  });

  it('treats anything else as CSV, including a header that holds braces later on', () => {
    expect(rows(parseBatch('name\n{"name":"a"}\n'))).toEqual([{ line: 2, mappings: { name: '{"name":"a"}' } }]);
  });

  it('follows an explicit format over the content', () => {
    // Forced CSV: the JSON object is read as a one-column header with no rows.
    expect(issues(parseBatch('{"name":"a"}\n', 'csv'))).toEqual(['batch: no rows after the header']);
    // Forced NDJSON: a CSV header is not JSON.
    expect(issues(parseBatch('name\nalice\n', 'ndjson'))[0]).toMatch(/^batch line 1: invalid JSON/);
  });

  it('gives the same mappings for the same data in either format', () => {
    const csv = rows(parseBatch('name,email\r\n"O\'Neil, Pat",pat@example.com\r\n'));
    const ndjson = rows(parseBatch('{"name":"O\'Neil, Pat","email":"pat@example.com"}\n'));
    expect(csv.map((r) => r.mappings)).toEqual(ndjson.map((r) => r.mappings));
  });
});
