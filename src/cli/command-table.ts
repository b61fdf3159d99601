// The top-level commands, in the order `wmark --help` lists them: the line the root help prints for each, and how to
// load the module that defines it. A run loads only the modules of the commands its arguments name, so `wmark --help`
// and a mistyped command load none, and `wmark watermark ...` loads the watermark command alone. The lines here are
// the root help's own text; a test holds each to the term and description its module gives the command.
import type { Command } from 'commander';

/** What registers a command (or a pair that belongs together) on the program. */
type Register = (program: Command) => void;

export interface CommandEntry {
  /** The top-level names its module registers (a hidden one included). */
  readonly names: readonly string[];
  /** The root help's term (name, `[options]`, arguments) and description, as commander would print them. */
  readonly term: string;
  readonly description: string;
  readonly hidden?: boolean;
  /** Its module, loaded when a run names the command. */
  readonly load: () => Promise<Register>;
  /** It reads the whole command tree when it runs (the completion script), so every command is loaded with it. */
  readonly readsTree?: boolean;
}

export const COMMANDS: readonly CommandEntry[] = [
  {
    names: ['ingest'],
    term: 'ingest [options] [file-or-url]',
    description: 'register a video (local file or http(s) URL) and prepare it for watermarking',
    load: async () => (await import('./commands/ingest.js')).registerIngest,
  },
  {
    names: ['video'],
    term: 'video',
    description: 'list and show ingested videos',
    load: async () => (await import('./commands/video.js')).registerVideo,
  },
  {
    names: ['template'],
    term: 'template',
    description: 'settings templates with placeholders (%name% or [%name%])',
    load: async () => (await import('./commands/template.js')).registerTemplate,
  },
  {
    names: ['watermark'],
    term: 'watermark [options]',
    description: 'watermark an ingested video (local engine, or a remote service with --remote); list, view and rm manage watermarks',
    load: async () => {
      const [{ registerWatermark }, { registerWatermarkManagement }] = await Promise.all([
        import('./commands/watermark.js'),
        import('./commands/watermark-manage.js'),
      ]);
      return (program) => registerWatermarkManagement(registerWatermark(program));
    },
  },
  {
    names: ['serve'],
    term: 'serve [options]',
    description: 'serve the watermarking API (1.0 + 2.0), signed HLS/mp4 and the player page',
    load: async () => (await import('./commands/serve.js')).registerServe,
  },
  {
    names: ['status'],
    term: 'status [options]',
    description:
      "the running `wmark serve` of this data folder (or --url): healthy, its render farm's queue and workers, and its state database (as its /readyz sees it, and from here with --db)",
    load: async () => (await import('./commands/status.js')).registerStatus,
  },
  {
    names: ['worker'],
    term: 'worker [options]',
    description: 'render segments, ingests and forensic variants for a `wmark serve --queue` render farm: tasks from Redis, media in a shared store',
    load: async () => (await import('./commands/worker.js')).registerWorker,
  },
  {
    names: ['detect'],
    term: 'detect [options] <file>',
    description: 'read the forensic payload from a leaked copy and name the watermark(s) it was issued to',
    load: async () => (await import('./commands/detect.js')).registerDetect,
  },
  {
    names: ['auth'],
    term: 'auth',
    description: 'credentials: a token for a remote service (auth login|status|logout), API keys for `wmark serve` (auth keys ...)',
    load: async () => {
      const [{ registerAuth }, { registerRemoteAuth }] = await Promise.all([import('./commands/auth.js'), import('./commands/auth-remote.js')]);
      return (program) => registerRemoteAuth(registerAuth(program));
    },
  },
  {
    names: ['poll'],
    term: 'poll [options] <href>',
    description: "poll a watermark's signed long-poll href (1.0) until READY or FAILED",
    load: async () => (await import('./commands/poll.js')).registerPoll,
  },
  {
    names: ['doctor'],
    term: 'doctor [options]',
    description:
      "check ffmpeg, ffprobe, filters, font, data dir and database (PostgreSQL with --db: reachable, its schema against this wmark's; nothing is changed) and a render farm's queue and media store",
    load: async () => (await import('./commands/doctor.js')).registerDoctor,
  },
  {
    names: ['db'],
    term: 'db',
    description: 'the state database: copy a data folder into PostgreSQL',
    load: async () => (await import('./commands/db.js')).registerDb,
  },
  {
    names: ['demo'],
    term: 'demo [options]',
    description: 'run the whole product on a generated sample: ingest, serve, watermark through the API, print the player link',
    load: async () => (await import('./commands/demo.js')).registerDemo,
  },
  {
    names: ['job'],
    term: 'job',
    description: 'internal: run a queued job to completion',
    hidden: true,
    load: async () => (await import('./commands/job.js')).registerJob,
  },
  {
    names: ['completion', '__complete'],
    term: 'completion <shell>',
    description: 'print a shell completion script for bash, zsh or fish',
    load: async () => (await import('./commands/completion.js')).registerCompletion,
    readsTree: true,
  },
];

/**
 * The entries a run must load in full: those whose names occur among its arguments (before `--`). A word that only
 * looks like a command (a flag's value, say) loads a module for nothing, never too few. With a command that reads the
 * whole tree (`completion`), every one.
 */
export function commandsNamedIn(argv: readonly string[], table: readonly CommandEntry[] = COMMANDS): Set<CommandEntry> {
  const end = argv.indexOf('--');
  const words = new Set(end === -1 ? argv : argv.slice(0, end));
  const named = table.filter((e) => e.names.some((n) => words.has(n)));
  return new Set(named.some((e) => e.readsTree && words.has(e.names[0]!)) ? table : named);
}
