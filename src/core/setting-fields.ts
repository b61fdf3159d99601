// The building blocks of the settings schemas (setting-schema.ts): numbers with their units and ranges, keywords,
// colours, the anchor and its alignments, the MOVE animation. Each carries the one message that covers every way its
// value can be wrong.
import { z } from 'zod';
import { closestKey, describeValue, quote, rejectKey } from './issue-text.js';
import { DEFAULTS, type HAlign, type ImageSetting, MAX_ANIMATION_SECONDS, type TextSetting, type VAlign } from './setting-types.js';

export type Rejected = { input?: unknown };

/** A rejected value as messages show it: a string in quotes, anything else described. */
export const shown = (v: unknown): string => (typeof v === 'string' ? quote(v) : describeValue(v));
export const didYouMean = (near: string | undefined): string => (near === undefined ? '' : ` (did you mean "${near}"?)`);
export const unknownKey = (key: string, keys: readonly string[]): string =>
  `unknown key ${quote(key)}${didYouMean(closestKey(key, keys))}; allowed keys: ${keys.join(', ')}`;

/** An object whose unknown keys are each reported with the nearest declared key (or as `refusal` words them). */
export function strictFields<T extends z.core.$ZodLooseShape>(shape: T, error?: (rejected: Rejected) => string, refusal?: (key: string) => string) {
  return z.object(shape, { error }).catchall(rejectKey(refusal ?? ((key) => unknownKey(key, Object.keys(shape)))));
}

/**
 * zod skips a rule spanning several fields once any field has failed; this runs it as soon as the fields it reads
 * are valid, so every problem still comes back in one round trip.
 */
const whenValid = (...keys: string[]) => ({
  when: ({ issues }: z.core.ParsePayload) => issues.every((i) => i.path?.[0] !== undefined && !keys.includes(String(i.path[0]))),
});

/** A number in [min, max] ((min, max] with minExclusive) measured in `unit`; `required` words a missing one. */
function numberIn(unit: string, min: number, max: number, opts: { minExclusive?: boolean; required?: string } = {}) {
  const range = `${opts.minExclusive ? '(' : '['}${min}, ${max}]`;
  const error = ({ input }: Rejected): string => {
    if (input === undefined && opts.required !== undefined) return `required (${opts.required})`;
    // NaN and ±Infinity are numbers to the sender, so they get the range message.
    if (typeof input === 'number') return `expected a number in ${range} (${unit}), got ${input}`;
    const quoted = typeof input === 'string' && input.trim() !== '' && Number.isFinite(Number(input));
    return `expected a number (${unit}), got ${describeValue(input)}${quoted ? ' (numbers must be sent unquoted)' : ''}`;
  };
  const n = z.number({ error });
  // -0 and 0 mean the same position; keep one spelling so identities agree.
  return (opts.minExclusive ? n.gt(min) : n.gte(min)).lte(max).transform((v) => (v === 0 ? 0 : v));
}

/** A case-insensitive keyword; `table` maps each accepted spelling, upper-cased, to its meaning. */
export function keyword<T extends string>(table: Readonly<Record<string, T>>, error: (rejected: Rejected) => string) {
  return z
    .string({ error })
    .refine((s) => Object.hasOwn(table, s.toUpperCase()), { error })
    .transform((s) => table[s.toUpperCase()]!);
}

const oneOf = <T extends string>(table: Readonly<Record<string, T>>, listed: string) =>
  keyword(table, ({ input }) => `expected one of ${listed} (case-insensitive), got ${shown(input)}`);

export const requiredString = (what: string) =>
  z.string({ error: ({ input }) => (input === undefined ? `required (${what})` : `expected a string, got ${describeValue(input)}`) });

const POSITION_X = numberIn('fraction of frame width', -10, 10);
const POSITION_Y = numberIn('fraction of frame height', -10, 10);
export const FONT_SIZE = numberIn('fraction of frame height', 0, 1, { minExclusive: true });
export const OPACITY = numberIn('opacity 0..1', 0, 1);
export const IMAGE_WIDTH = numberIn('fraction of frame width', 0, 1, { minExclusive: true });
export const SHADOW_OFFSET = numberIn('fraction of font size', -5, 5);
const SECONDS = numberIn('seconds', 0, MAX_ANIMATION_SECONDS, { required: 'seconds of the video timeline' });
const H_ALIGN = oneOf<HAlign>({ LEFT: 'LEFT', CENTER: 'CENTER', MIDDLE: 'CENTER', RIGHT: 'RIGHT' }, 'LEFT, CENTER, RIGHT');
const V_ALIGN = oneOf<VAlign>({ TOP: 'TOP', MIDDLE: 'MIDDLE', CENTER: 'MIDDLE', BOTTOM: 'BOTTOM' }, 'TOP, MIDDLE, CENTER, BOTTOM');

export const COLOUR = z
  .string({ error: ({ input }) => `expected a colour as RRGGBB (6 hex digits, optional # or 0x prefix), got ${shown(input)}` })
  .regex(/^(?:#|0[xX])?[0-9A-Fa-f]{6}$/)
  .transform((s) => s.slice(-6).toUpperCase());

/** A move from (x, y) to (toX, toY); a missing target stays on that axis. */
export const ANIMATION = strictFields(
  {
    type: oneOf({ MOVE: 'MOVE' }, 'MOVE').optional(),
    toX: POSITION_X.optional(),
    toY: POSITION_Y.optional(),
    startTime: SECONDS,
    endTime: SECONDS,
  },
  ({ input }) => `expected an object {type?: "MOVE", toX?, toY?, startTime, endTime}, got ${describeValue(input)}`,
).superRefine(
  (a, ctx) => {
    if (a.endTime <= a.startTime) {
      ctx.addIssue({ code: 'custom', path: ['endTime'], message: `must be greater than startTime (${a.startTime}), got ${a.endTime}` });
    }
  },
  whenValid('startTime', 'endTime'),
);

/** `alias` is another spelling of `key`: both may be given only if they agree. */
export const agree = (key: 'align' | 'verticalAlign', alias: 'horizontalAlignment' | 'verticalAlignment') =>
  z.superRefine(
    (s: Partial<Record<typeof key | typeof alias, string>>, ctx) => {
      const [main, other] = [s[key], s[alias]];
      if (main !== undefined && other !== undefined && main !== other) {
        const message = `conflicts with ${key} (${other} vs ${main}); give only one of ${key} or ${alias}`;
        ctx.addIssue({ code: 'custom', path: [alias], message });
      }
    },
    whenValid(key, alias),
  );

/** Where a visible setting is anchored: position and alignments (their aliases resolved, their defaults filled). */
export const PLACEMENT = {
  x: POSITION_X.default(DEFAULTS.x),
  y: POSITION_Y.default(DEFAULTS.y),
  // The two spellings of the alignments get their default once both are read.
  align: H_ALIGN.optional(),
  horizontalAlignment: H_ALIGN.optional(),
  verticalAlign: V_ALIGN.optional(),
  verticalAlignment: V_ALIGN.optional(),
};

export function placed(p: { x: number; y: number; align?: HAlign; horizontalAlignment?: HAlign; verticalAlign?: VAlign; verticalAlignment?: VAlign }) {
  return {
    x: p.x,
    y: p.y,
    align: p.align ?? p.horizontalAlignment ?? DEFAULTS.align,
    verticalAlign: p.verticalAlign ?? p.verticalAlignment ?? DEFAULTS.verticalAlign,
  };
}

export type Animation = z.output<typeof ANIMATION>;

/** A move's missing target stays on that axis. */
export function withAnimation<T extends TextSetting | ImageSetting>(setting: T, animation: Animation | undefined): T {
  if (animation) {
    const { toX = setting.x, toY = setting.y, startTime, endTime } = animation;
    setting.animation = { type: 'MOVE', toX, toY, startTime, endTime };
  }
  return setting;
}
