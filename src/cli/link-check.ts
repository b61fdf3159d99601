// What happens after a command prints watermark links: a warning when nothing answers where they point (local links
// name a service the command itself does not run), and --open.
import type { CliContext } from './context.js';
import { openLink } from './open-link.js';
import { answersAt } from './serve-record.js';

interface Linked {
  containers?: { href?: string; m3u8?: string; mp4?: string };
}

/** Says so when nothing answers at the links' origin; not with --json or --quiet, whose readers take links as data. */
export async function warnIfUnserved(ctx: CliContext, resource: Linked): Promise<void> {
  const link = resource.containers?.href ?? resource.containers?.m3u8 ?? resource.containers?.mp4;
  if (!link || ctx.output.mode === 'json' || ctx.output.options.quiet) return;
  if (await answersAt(link)) return;
  const origin = new URL(link).origin;
  ctx.output.warn(
    `nothing answers at ${origin}, so these links will not play until a service runs there: start \`wmark serve\` (links follow a running serve on this data folder), or give --public-url`,
  );
}

/** The unserved-link check (local links), then --open on the player link. */
export async function afterLinks(ctx: CliContext, resource: Linked, open: boolean | undefined, options: { check?: boolean } = {}): Promise<void> {
  if (options.check !== false) await warnIfUnserved(ctx, resource);
  if (open && resource.containers?.href) await openLink(ctx, resource.containers.href);
}
