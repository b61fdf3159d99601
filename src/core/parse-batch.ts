// Batch files for `wmark watermark --batch`: CSV (header row = placeholder names) or NDJSON, one mapping per row.
import type { Result } from './issue-text.js';

export interface BatchRow {
  /** 1-based line (CSV: record start line) for error messages. */
  line: number;
  mappings: Record<string, string>;
}

/** RFC 4180 CSV: quoted fields may hold commas, quotes ("") and newlines; CRLF or LF; a BOM is ignored. */
export function parseCsv(text: string): { line: number; fields: string[] }[] {
  const src = text.replace(/^\uFEFF/, '');
  const records: { line: number; fields: string[] }[] = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let recordLine = 1;
  let fieldStarted = false;
  const endRecord = () => {
    fields.push(field);
    if (!(fields.length === 1 && fields[0] === '' && !fieldStarted)) records.push({ line: recordLine, fields });
    fields = [];
    field = '';
    fieldStarted = false;
  };
  for (let i = 0; i < src.length; i++) {
    const ch = src[i]!;
    if (quoted) {
      if (ch === '"') {
        if (src[i + 1] === '"') (field += '"'), i++;
        else quoted = false;
      } else {
        if (ch === '\n') line++;
        field += ch;
      }
    } else if (ch === '"' && field === '') {
      quoted = true;
      fieldStarted = true;
    } else if (ch === ',') {
      fields.push(field);
      field = '';
      fieldStarted = true;
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && src[i + 1] === '\n') i++;
      endRecord();
      line++;
      recordLine = line;
    } else {
      field += ch;
      fieldStarted = true;
    }
  }
  if (quoted) throw new Error(`line ${recordLine}: unterminated quoted field`);
  if (field !== '' || fields.length || fieldStarted) endRecord();
  return records;
}

export function parseBatch(text: string, format: 'csv' | 'ndjson' | 'auto' = 'auto'): Result<BatchRow[]> {
  const kind = format === 'auto' ? (text.replace(/^\uFEFF/, '').trimStart().startsWith('{') ? 'ndjson' : 'csv') : format;
  return kind === 'ndjson' ? parseNdjson(text) : parseCsvBatch(text);
}

function parseCsvBatch(text: string): Result<BatchRow[]> {
  let records;
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
  text.replace(/^\uFEFF/, '').split(/\r?\n/).forEach((raw, i) => {
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
