// Reads a JSON document (or raw text) from a file or, for "-", from stdin, with errors that name the source.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { usageError } from '../core/errors.js';
import type { CliIO } from './io.js';

export async function readTextInput(io: CliIO, source: string): Promise<{ text: string; label: string }> {
  if (source === '-') {
    if (io.stdin.isTTY) throw usageError('STDIN_IS_TTY', 'expected input on stdin, but stdin is a terminal', { hint: 'Pipe the file in, or give its path instead of "-".' });
    const chunks: Buffer[] = [];
    for await (const chunk of io.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
    return { text: Buffer.concat(chunks).toString('utf8'), label: 'stdin' };
  }
  const file = path.resolve(io.cwd, source);
  try {
    return { text: await readFile(file, 'utf8'), label: source };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw usageError('INPUT_NOT_READABLE', `cannot read ${source}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a folder' : (error as Error).message}`);
  }
}

export function parseJsonText(text: string, label: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    const pos = /position (\d+)/.exec(message);
    let where = '';
    if (pos) {
      const before = text.slice(0, Number(pos[1]));
      const line = before.split('\n').length;
      where = ` (line ${line}, column ${before.length - before.lastIndexOf('\n')})`;
    }
    throw usageError('INVALID_JSON', `${label} is not valid JSON${where}: ${message}`);
  }
}

export async function readJsonInput(io: CliIO, source: string): Promise<unknown> {
  const { text, label } = await readTextInput(io, source);
  return parseJsonText(text, label);
}
