// Settings as a 2.0 request gives them, parsed as the service parses them: each text reads "for alice" unless given.
import { parseSettings } from '../../src/core/setting-schema.js';
import type { Setting } from '../../src/core/setting-types.js';

export function parsedSettings(...raw: Record<string, unknown>[]): Setting[] {
  const r = parseSettings(
    raw.map((s) => ({ content: 'for alice', ...s })),
    { apiVersion: '2.0' },
  );
  if (!r.ok) throw new Error(r.issues.join('\n'));
  return r.value;
}
