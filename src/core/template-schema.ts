// The body of a settings template ({name, description?, settings}) as a zod schema; every problem is listed in one error.
import { z } from 'zod';
import { withoutNullFields } from './absent-fields.js';
import type { ApiVersion } from './api-version.js';
import { validationError, WmarkError } from './errors.js';
import { inDeclaredOrder, isPlainObject, issueLines, rejectKey } from './issue-text.js';
import { parseTemplateSettings } from './setting-schema.js';
import type { TemplateSetting } from './setting-types.js';

const MAX_NAME_CHARS = 200;
const NON_EMPTY = 'expected a non-empty string';

const NAME = z
  .string({ error: NON_EMPTY })
  // A blank name is reported as blank only, however long; the cap counts the name as sent.
  .refine((s) => s.trim() !== '', { error: NON_EMPTY, abort: true })
  .refine((s) => s.length <= MAX_NAME_CHARS, `at most ${MAX_NAME_CHARS} characters`)
  .transform((s) => s.trim());

const TEMPLATE_BODY = z
  .object({
    name: NAME,
    description: z.string({ error: 'expected a string' }).nullable().default(null),
    // Checked by parseTemplateSettings below: settings have their own per-element schemas.
    settings: z.unknown().optional(),
    // A template that was read back (an export, a built-in) may carry its id; it is ignored.
    id: z.unknown().optional(),
  })
  .catchall(rejectKey(() => 'unknown field (expected name, description, settings)'));

/** API 1.0's SDKs save templates without a name; 2.0 and the CLI name every template. */
const NAMELESS_TEMPLATE_BODY = TEMPLATE_BODY.extend({ name: NAME.optional() });

const TEMPLATE_KEYS = Object.keys(TEMPLATE_BODY.shape);

export interface TemplateOrder {
  /** Trimmed; absent only for a 1.0 template saved without one. */
  name?: string;
  description: string | null;
  settings: TemplateSetting[];
}

/** Validates a template body, listing every problem in one TEMPLATE_INVALID error; the name comes back trimmed. */
export function parseTemplateBody(input: unknown, apiVersion?: ApiVersion): TemplateOrder {
  if (!isPlainObject(input)) {
    throw new WmarkError('TEMPLATE_INVALID', 'a template must be a JSON object {"name", "description"?, "settings"}');
  }
  const body = (apiVersion === '1.0' ? NAMELESS_TEMPLATE_BODY : TEMPLATE_BODY).safeParse(withoutNullFields(input));
  const settings = parseTemplateSettings(input.settings, { apiVersion });
  if (body.success && settings.ok) return { name: body.data.name, description: body.data.description, settings: settings.value };
  throw validationError('TEMPLATE_INVALID', [
    ...(body.success ? [] : issueLines(inDeclaredOrder(body.error.issues, () => TEMPLATE_KEYS))),
    ...(settings.ok ? [] : settings.issues),
  ]);
}
