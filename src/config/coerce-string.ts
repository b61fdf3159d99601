// Reading an env var's or a flag's string as the type its config field holds, leaving anything else for the schema to reject.

/** What a config field holds, which decides how its env var or flag string is read. */
export type FieldKind = 'string' | 'int' | 'boolean' | 'api' | 'path' | 'command';

/** Env vars and argv are strings; numbers are parsed only when they look like one so the error shows the original text. */
export function coerce(value: string, kind: FieldKind): unknown {
  const text = value.trim();
  switch (kind) {
    case 'int':
      return /^[+-]?\d+$/.test(text) ? Number(text) : value;
    case 'boolean':
      if (/^(1|true|yes|on)$/i.test(text)) return true;
      if (/^(0|false|no|off)$/i.test(text)) return false;
      return value;
    case 'api':
      // `--api 2` is what people type.
      return /^[12]$/.test(text) ? `${text}.0` : text;
    default:
      return value;
  }
}
