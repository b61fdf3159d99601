// `wmark worker`: a render-farm worker (README.md, "Running a render farm"). Takes tasks (segment renders, ingests,
// forensic variants) from Redis, runs them with this machine's ffmpeg and font, and reads and writes media in the shared
// store, until Ctrl-C or SIGTERM.
import { type Command, Option } from 'commander';
import { validationError } from '../../core/errors.js';
import { locateTools } from '../../ffmpeg/locate-tools.js';
import { action } from '../action.js';
import { addMediaOptions, mediaFlags } from '../media-flags.js';
import { whenAborted } from '../signals.js';

export function registerWorker(program: Command): void {
  const command = program
    .command('worker')
    .description('render segments, ingests and forensic variants for a `wmark serve --queue` render farm: tasks from Redis, media in a shared store')
    .option('--queue <url>', 'the Redis that serve queues work on: redis://HOST:PORT (env WMARK_QUEUE_URL, config queue.url)');
  addMediaOptions(command, "the shared media store, the same as serve's")
    .option('--concurrency <n>', 'segments rendered at once (default 1; about one per 2 cores)')
    .option('--threads <n>', 'ffmpeg threads per segment (default: the cores shared among --concurrency)')
    .option('--shutdown-timeout <seconds>', 'on SIGTERM or Ctrl-C, how long the tasks in hand get to finish before they go back to the queue (default 10)')
    .addOption(new Option('--lock-timeout <seconds>', "seconds before a dead worker's task goes to another worker (default 30)").hideHelp())
    .action(
      action(async (ctx, raw: Record<string, string | undefined>) => {
        // The queue as serve finds it: --queue (checked below, as BAD_QUEUE_URL), WMARK_QUEUE_URL or queue.url in the config.
        ctx.setConfigFlags({ shutdownTimeout: raw.shutdownTimeout });
        const config = await ctx.loadConfig();
        const { workerOptionsSchema } = await import('../worker-options.js');
        const parsed = workerOptionsSchema.safeParse({ ...raw, queue: raw.queue ?? config.queue?.url, ...mediaFlags(raw, config) });
        if (!parsed.success)
          throw validationError(
            'BAD_FLAG',
            parsed.error.issues.map((i) => i.message),
            'See `wmark worker --help`.',
          );
        const opts = parsed.data;
        const tools = locateTools({ ffmpeg: config.ffmpeg, ffprobe: config.ffprobe, font: config.font });
        // Loaded here, not at start: BullMQ and the AWS SDK are slow to load, and every other command would pay for it.
        const [{ startFarmWorker }, { openMediaStore }, { createProcessRunner }] = await Promise.all([
          import('../../farm/farm-worker.js'),
          import('../../media/open-media-store.js'),
          import('../../ffmpeg/run-ffmpeg.js'),
        ]);
        // The worker's one clock, read by its store, its runner and itself: the wall clock, chosen here at the edge.
        const now = Date.now;
        const store = openMediaStore(opts.media, { endpoint: opts.s3Endpoint, region: opts.s3Region, now });
        try {
          const worker = await startFarmWorker({
            queueUrl: opts.queue,
            store,
            runner: createProcessRunner(tools.ffmpeg.path, tools.ffprobe.path, { now }),
            now,
            tools: { ffmpeg: tools.ffmpeg.path, font: tools.font.path },
            concurrency: opts.concurrency,
            threads: opts.threads,
            lockMs: opts.lockTimeout === undefined ? undefined : opts.lockTimeout * 1000,
            log: (line) => ctx.output.info(line),
          });
          // stdout is data: the worker's id, once it takes work (scripts and tests wait for this line).
          ctx.output.line({ worker: worker.id, queue: opts.queue.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@'), media: store.location }, () => worker.id);
          await whenAborted(ctx.signal);
          const seconds = config.shutdownTimeoutSeconds;
          ctx.output.info(
            `stopping: the tasks in hand get ${seconds} s to finish, then go back to the queue (Ctrl-C or SIGTERM again stops at once; a task cut off goes to another worker once its lock expires)`,
          );
          await worker.close({ timeoutMs: seconds * 1000 });
          return 0;
        } finally {
          store.close();
        }
      }),
    );
}
