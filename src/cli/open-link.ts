// `--open`: hands a link to the platform's opener (open, xdg-open, start), or to WMARK_OPENER when set (a command;
// the link is its last argument). Never waits for the browser; a missing opener is a warning, not a failure.
import { spawn } from 'node:child_process';
import type { CliContext } from './context.js';

function openerFor(env: Readonly<Record<string, string | undefined>>, platform: NodeJS.Platform = process.platform): { command: string; args: string[] } {
  const custom = env.WMARK_OPENER?.trim();
  if (custom) {
    const [command, ...args] = custom.split(/\s+/);
    return { command: command!, args };
  }
  if (platform === 'darwin') return { command: 'open', args: [] };
  // `start` is a cmd built-in; its first quoted argument is a window title.
  if (platform === 'win32') return { command: 'cmd', args: ['/c', 'start', '""'] };
  return { command: 'xdg-open', args: [] };
}

/** Opens the link; resolves once the opener started (or failed to). */
export function openLink(ctx: CliContext, link: string): Promise<void> {
  const { command, args } = openerFor(ctx.io.env);
  return new Promise((resolve) => {
    const child = spawn(command, [...args, link], { stdio: 'ignore', detached: true, env: { ...process.env, ...ctx.io.env } });
    child.once('error', (error: NodeJS.ErrnoException) => {
      ctx.output.warn(
        `could not open the link with ${command} (${error.code ?? error.message}); open it yourself, or set WMARK_OPENER to your browser command`,
      );
      resolve();
    });
    child.once('spawn', () => {
      child.unref();
      ctx.output.info(`opened ${link.length > 80 ? `${link.slice(0, 77)}...` : link} with ${command}`);
      resolve();
    });
  });
}
