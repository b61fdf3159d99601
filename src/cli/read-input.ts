// Reads a JSON document (or raw text) from a file or, for "-", from stdin, with errors that name the source.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { WmarkError } from '../core/errors.js';
import type { CliIO } from './io.js';

export async function readTextInput(io: CliIO, source: string): Promise<{ text: string; label: string }> {
  if (source === '-') {
    if (io.stdin.isTTY)
      throw new WmarkError('STDIN_IS_TTY', 'expected input on stdin, but stdin is a terminal', { hint: 'Pipe the file in, or give its path instead of "-".' });
    const chunks: Buffer[] = [];
    for await (const chunk of io.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
    return { text: Buffer.concat(chunks).toString('utf8'), label: 'stdin' };
  }
  const file = path.resolve(io.cwd, source);
  try {
    return { text: await readFile(file, 'utf8'), label: source };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new WmarkError(
      'INPUT_NOT_READABLE',
      `cannot read ${source}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a folder' : (error as Error).message}`,
    );
  }
}

function parseJsonText(text: string, label: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    // V8 gives a position for most mistakes but not for "Unexpected token 'x'" or "Unexpected end of JSON input".
    const pos = /position (\d+)/.exec(message)?.[1];
    const offset = pos !== undefined ? Number(pos) : jsonErrorOffset(text);
    let where = '';
    if (offset !== undefined) {
      const before = text.slice(0, offset);
      const line = before.split('\n').length;
      where = ` (line ${line}, column ${before.length - before.lastIndexOf('\n')})`;
    }
    throw new WmarkError('INVALID_JSON', `${label} is not valid JSON${where}: ${message}`);
  }
}

/** Offset of the first character a JSON parser rejects (text.length when the input ends too early). */
function jsonErrorOffset(text: string): number | undefined {
  let i = 0;
  const fail = (): never => {
    throw new JsonSyntaxAt(i);
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const expect = (ch: string) => {
    ws();
    if (text[i] !== ch) fail();
    i++;
  };
  const string = () => {
    expect('"');
    for (;;) {
      const ch = text[i];
      if (ch === undefined || ch < ' ') fail();
      if (ch === '"') return void i++;
      if (ch === '\\') {
        const escaped = /^(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/.exec(text.slice(i + 1, i + 6));
        if (!escaped) {
          i++;
          return fail();
        }
        i += 1 + escaped[0].length;
      } else i++;
    }
  };
  const value = (): void => {
    ws();
    const ch = text[i];
    if (ch === '"') {
      string();
      return;
    }
    if (ch === '{' || ch === '[') {
      const close = ch === '{' ? '}' : ']';
      i++;
      ws();
      if (text[i] === close) return void i++;
      for (;;) {
        if (close === '}') {
          string();
          expect(':');
        }
        value();
        ws();
        if (text[i] === close) return void i++;
        if (text[i] !== ',') fail();
        i++;
        ws();
      }
    }
    const literal = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 400));
    if (!literal) fail();
    i += literal![0].length;
  };
  try {
    value();
    ws();
    return i < text.length ? i : undefined;
  } catch (error) {
    if (error instanceof JsonSyntaxAt) return error.offset;
    return undefined; // e.g. nesting too deep to scan recursively: no position rather than a wrong one
  }
}

class JsonSyntaxAt {
  constructor(readonly offset: number) {}
}

export async function readJsonInput(io: CliIO, source: string): Promise<unknown> {
  const { text, label } = await readTextInput(io, source);
  return parseJsonText(text, label);
}
