// Every kind of work a render-farm worker takes, as one discriminated union: a segment render, a video's ingest
// transcode, and the forensic preparation of one working segment. A task without a kind is a segment render, as an
// older serve queued it, so work already in Redis when serve is upgraded still parses.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { validationError } from '../../core/errors.js';
import { type ForensicRunResult, type ForensicTask, forensicTaskSchema, measureKey } from './forensic-task.js';
import { type IngestRunResult, type IngestTask, ingestTaskSchema } from './ingest-task.js';
import { type SegmentRunResult, type SegmentTask, segmentTaskSchema } from './segment-task.js';

const farmTaskSchema = z.preprocess(
  (data) => (data !== null && typeof data === 'object' && !('kind' in data) ? { ...data, kind: 'segment' } : data),
  z.discriminatedUnion('kind', [segmentTaskSchema.extend({ kind: z.literal('segment') }), ingestTaskSchema, forensicTaskSchema]),
);

export type FarmTask = SegmentTask | IngestTask | ForensicTask;
export type FarmTaskKind = 'segment' | IngestTask['kind'] | ForensicTask['kind'];

export const taskKind = (task: FarmTask): FarmTaskKind => ('kind' in task && task.kind ? task.kind : 'segment');

/** What a finished task reports, by kind, with the worker that did it. */
export type FarmResult<T extends FarmTask> = (T extends IngestTask ? IngestRunResult : T extends ForensicTask ? ForensicRunResult : SegmentRunResult) & {
  worker: string;
};

/** Reads a task off the queue; anything malformed is TASK_INVALID, naming every problem. */
export function parseFarmTask(data: unknown): FarmTask {
  const parsed = farmTaskSchema.safeParse(data);
  if (parsed.success) {
    // A segment task keeps its old shape (no kind) for the code that renders it.
    if (parsed.data.kind === 'segment') {
      const { kind: _kind, ...segment } = parsed.data;
      return segment;
    }
    return parsed.data;
  }
  const kind = (data as { kind?: unknown } | null)?.kind ?? 'segment';
  throw validationError(
    'TASK_INVALID',
    parsed.error.issues.map((i) => `${String(kind)} task ${i.path.join('.') || ''}: ${i.message}`.replace('task : ', 'task: ')),
  );
}

/** What the task makes, for logs and messages: the segment, the video's folder, or the measurement. */
export function taskOutput(task: FarmTask): string {
  switch (taskKind(task)) {
    case 'ingest':
      return `${(task as IngestTask).outputPrefix}/`;
    case 'forensic-variant':
      return measureKey((task as ForensicTask).outputPrefix, (task as ForensicTask).index);
    default:
      return (task as SegmentTask).output;
  }
}

const hash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 40);

/** The job id of the task that writes `output` (BullMQ ids may not contain ':'). */
export function segmentJobId(output: string): string {
  return `seg-${hash(output)}`;
}

/** One job per output across the cluster: asking twice while it is queued or running joins the same job. */
export function farmJobId(task: FarmTask): string {
  switch (taskKind(task)) {
    case 'ingest':
      return `ing-${hash(taskOutput(task))}`;
    case 'forensic-variant':
      return `fvr-${hash(taskOutput(task))}`;
    default:
      return segmentJobId(taskOutput(task));
  }
}
