// What `wmark doctor --queue URL --media URL` adds for a render farm: Redis answers (and which version), the
// workers connected now, and the media store takes a write, gives it back, lists and deletes it.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Check } from '../engine/app/installation-checks.js';
import type { MediaStore } from '../media/media-store.js';
import { openMediaStore, type S3Access } from '../media/open-media-store.js';
import { unreachableAtStart } from '../media/reachability.js';
import { VERSION } from '../version.js';
import { redactQueueUrl } from './queue-url.js';
import { connectRedis } from './redis-connection.js';
import { TaskQueue } from './task-queue.js';

/** BullMQ 6 needs Redis 6.2 or later (it uses its newer commands). */
const MIN_REDIS = [6, 2];

export interface FarmCheckOptions {
  queue?: string;
  media?: string;
  s3?: S3Access;
  timeoutMs?: number;
  /** The clock that stamps the probe object the media check writes (the doctor's). */
  now: () => number;
}

export async function collectFarmChecks(options: FarmCheckOptions): Promise<Check[]> {
  const checks: Check[] = [];
  if (options.queue) checks.push(...(await queueChecks(options.queue, options.timeoutMs ?? 3_000)));
  if (options.media) checks.push(await mediaCheck(options.media, { ...options.s3, now: options.now }, options.now));
  return checks;
}

const firstLine = (error: unknown) => (error instanceof Error ? error.message : String(error)).split('\n')[0]!;

async function queueChecks(url: string, timeoutMs: number): Promise<Check[]> {
  const shown = redactQueueUrl(url);
  let version: string;
  try {
    const client = await connectRedis(url, { timeoutMs, name: 'wmark-doctor' });
    try {
      version = /redis_version:(\S+)/.exec(await client.info('server'))?.[1] ?? 'unknown';
    } finally {
      client.disconnect();
    }
  } catch (error) {
    return [{ name: 'queue', ok: false, detail: firstLine(error), required: true }];
  }
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const recent = major > MIN_REDIS[0]! || (major === MIN_REDIS[0] && minor >= MIN_REDIS[1]!);
  const checks: Check[] = [
    {
      name: 'queue',
      ok: recent,
      detail: `${shown} answers (Redis ${version}${recent ? '' : `; the queue needs ${MIN_REDIS.join('.')} or later`})`,
      required: true,
    },
  ];
  try {
    const queue = await TaskQueue.open(url, { connectTimeoutMs: timeoutMs });
    try {
      const [workers, counts] = await Promise.all([queue.workers(), queue.counts()]);
      const waiting = counts.waiting + counts.prioritized + counts.delayed;
      const others = workers.filter((w) => w.version !== VERSION);
      const listed = workers.map((w) => `${w.id} (wmark ${w.version ?? 'unknown'})`).join(', ');
      checks.push({
        name: 'workers',
        ok: workers.length > 0 && others.length === 0,
        // Not required: serve can queue work before any worker runs; it waits until one does.
        detail: [
          workers.length ? `${workers.length} connected: ${listed}` : 'none connected (segments wait until a `wmark worker` starts)',
          ...(others.length ? [`${others.length} run(s) another version than this wmark ${VERSION} and refuse its tasks`] : []),
          `${waiting} task(s) waiting, ${counts.active} rendering, ${counts.failed} failed`,
        ].join('; '),
        required: false,
      });
    } finally {
      await queue.close();
    }
  } catch (error) {
    checks.push({ name: 'workers', ok: false, detail: firstLine(error), required: false });
  }
  return checks;
}

/** Writes a small object, reads it back, finds it in a listing and deletes it: what serve and the workers do. */
async function mediaCheck(url: string, s3: S3Access, now: () => number): Promise<Check> {
  let store: MediaStore;
  try {
    store = openMediaStore(url, s3);
  } catch (error) {
    return { name: 'media store', ok: false, detail: firstLine(error), required: true };
  }
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'wmark-doctor-'));
  const prefix = `doctor-${os.hostname().replace(/[^A-Za-z0-9_-]/g, '-')}-${process.pid}-${randomBytes(4).toString('hex')}/`;
  const key = `${prefix}probe.txt`;
  const content = `wmark doctor ${new Date(now()).toISOString()}\n`;
  let step = 'write';
  try {
    await writeFile(path.join(scratch, 'out.txt'), content);
    await store.putFile(key, path.join(scratch, 'out.txt'));
    step = 'read';
    await store.getFile(key, path.join(scratch, 'in.txt'));
    if ((await readFile(path.join(scratch, 'in.txt'), 'utf8')) !== content) throw new Error('the object read back differs from the one written');
    step = 'list';
    if (!(await store.list(prefix)).includes(key)) throw new Error('the object written is missing from the listing');
    step = 'delete';
    await store.deletePrefix(prefix);
    return { name: 'media store', ok: true, detail: `${store.location} (write, read, list and delete work)`, required: true };
  } catch (error) {
    if (step !== 'write') await store.deletePrefix(prefix).catch(() => undefined);
    return { name: 'media store', ok: false, detail: `${store.location}: cannot ${step}: ${firstLine(unreachableAtStart(store, error))}`, required: true };
  } finally {
    store.close();
    await rm(scratch, { recursive: true, force: true });
  }
}
