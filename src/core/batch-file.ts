// Batch files for `wmark watermark --batch`: CSV (header row = placeholder names, RFC 4180 via csv-parse) or NDJSON,
// one mapping per row, with every problem named by the line it is on.
import { CsvError, parse } from 'csv-parse/sync';
import type { Result } from './issue-text.js';

export interface BatchRow {
  /** 1-based line (CSV: the line the record starts on) for error messages. */
  line: number;
  mappings: Record<string, string>;
}

const LINE_BREAKS = /\r\n|\n|\r/g;
const countBreaks = (text: string) => (text.match(LINE_BREAKS) ?? []).length;

/**
 * CSV records with the line each starts on. csv-parse reports the line a record ends on, and counts a CRLF inside a
 * quoted field as two lines; both are corrected from the record's own fields.
 */
export function parseCsv(text: string): { line: number; fields: string[] }[] {
  const records: { line: number; fields: string[] }[] = [];
  let overcount = 0;
  let lastEnd = 0;
  try {
    parse(text, {
      bom: true,
      relax_column_count: true,
      // A quote inside an unquoted field is text (`{"name":"a"}`), as most spreadsheets write it.
      relax_quotes: true,
      skip_empty_lines: true,
      on_record: (fields: string[], context: { lines: number }) => {
        const inside = fields.reduce((n, f) => n + countBreaks(f), 0);
        const crlfInside = fields.reduce((n, f) => n + (f.match(/\r\n/g) ?? []).length, 0);
        const end = context.lines - overcount - crlfInside;
        overcount += crlfInside;
        records.push({ line: end - inside, fields });
        lastEnd = end;
        return fields;
      },
    });
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    // The failing record starts on the first non-blank line after the last good one.
    const lines = text.replace(/^\uFEFF/, '').split(LINE_BREAKS);
    let start = lastEnd + 1;
    while (start <= lines.length && lines[start - 1]!.trim() === '') start++;
    const what =
      error.code === 'CSV_QUOTE_NOT_CLOSED'
        ? 'unterminated quoted field'
        : error.message
            .replace(/ at line \d+.*$/, '')
            .replace(/^[^:]+: /, '')
            .toLowerCase();
    throw new Error(`line ${start}: ${what}`);
  }
  return records;
}

export function parseBatch(text: string, format: 'csv' | 'ndjson' | 'auto' = 'auto'): Result<BatchRow[]> {
  const kind =
    format === 'auto'
      ? text
          .replace(/^\uFEFF/, '')
          .trimStart()
          .startsWith('{')
        ? 'ndjson'
        : 'csv'
      : format;
  return kind === 'ndjson' ? parseNdjson(text) : parseCsvBatch(text);
}

function parseCsvBatch(text: string): Result<BatchRow[]> {
  let records: { line: number; fields: string[] }[];
  try {
    records = parseCsv(text);
  } catch (error) {
    return { ok: false, issues: [`batch: ${(error as Error).message}`] };
  }
  const [header, ...rows] = records;
  if (!header) return { ok: false, issues: ['batch: the file is empty (expected a header row of placeholder names)'] };
  const names = header.fields.map((f) => f.trim());
  const issues: string[] = [];
  names.forEach((n, i) => {
    if (!n) issues.push(`batch line ${header.line}: column ${i + 1} has no name`);
    else if (names.indexOf(n) !== i) issues.push(`batch line ${header.line}: column "${n}" appears twice`);
  });
  const out: BatchRow[] = [];
  for (const row of rows) {
    if (row.fields.length !== names.length) {
      issues.push(`batch line ${row.line}: expected ${names.length} fields (${names.join(', ')}), got ${row.fields.length}`);
      continue;
    }
    out.push({ line: row.line, mappings: Object.fromEntries(names.map((n, i) => [n, row.fields[i]!])) });
  }
  if (!out.length && !issues.length) issues.push('batch: no rows after the header');
  return issues.length ? { ok: false, issues } : { ok: true, value: out };
}

function parseNdjson(text: string): Result<BatchRow[]> {
  const issues: string[] = [];
  const out: BatchRow[] = [];
  text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .forEach((raw, i) => {
      if (!raw.trim()) return;
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch (error) {
        issues.push(`batch line ${i + 1}: invalid JSON: ${(error as Error).message}`);
        return;
      }
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        issues.push(`batch line ${i + 1}: expected an object of placeholder values`);
        return;
      }
      const bad = Object.entries(value).filter(([, v]) => typeof v !== 'string');
      if (bad.length) {
        issues.push(...bad.map(([k, v]) => `batch line ${i + 1}: "${k}" must be a string, got ${JSON.stringify(v)}`));
        return;
      }
      out.push({ line: i + 1, mappings: value as Record<string, string> });
    });
  if (!out.length && !issues.length) issues.push('batch: no rows');
  return issues.length ? { ok: false, issues } : { ok: true, value: out };
}
