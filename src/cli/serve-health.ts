// What a running `wmark serve` answers on /healthz and /readyz, as `wmark status` checks it: a module of its own so
// zod loads only when status asks a serve, not at every command's start.
import { z } from 'zod';

/**
 * What /healthz answers; the queue only on a farm (see src/farm/farm-renderer.ts). Asked from another machine, the
 * queue's URL, the media store and the workers' ids are left out.
 */
export const healthSchema = z.object({
  ok: z.boolean(),
  queue: z
    .object({
      url: z.string().optional(),
      media: z.string().optional(),
      reachable: z.boolean(),
      depth: z.object({ waiting: z.number(), active: z.number() }).nullable(),
      workers: z.array(z.object({ id: z.string().optional(), version: z.string().optional() })).nullable(),
    })
    .optional(),
});

export type Health = z.infer<typeof healthSchema>;

/** What /readyz answers (200 or 503): each dependency's state; where and why only to a caller on serve's machine. */
export const readySchema = z.object({
  ready: z.boolean(),
  dependencies: z.array(
    z.object({ name: z.string(), up: z.boolean(), location: z.string().optional(), downSince: z.number().optional(), reason: z.string().optional() }),
  ),
});

export type ReadyDependency = z.infer<typeof readySchema>['dependencies'][number];

export type Readiness = z.infer<typeof readySchema>;
