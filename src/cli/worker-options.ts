// `wmark worker`'s flags as one checked value: a module of its own so zod loads only when a worker starts, not at
// every command's start.
import { z } from 'zod';

const positiveInt = (flag: string) =>
  z
    .string()
    .regex(/^\d+$/, `${flag} takes a whole number`)
    .transform(Number)
    .refine((n) => n >= 1 && n <= 64, `${flag} takes 1 to 64`);

/** `wmark worker`'s flags, with the queue and store from config when not given. */
export const workerOptionsSchema = z.object({
  queue: z.string({ error: 'which queue? give --queue redis://HOST:PORT or set WMARK_QUEUE_URL' }).min(1),
  media: z.string({ error: "which media store? give --media s3://BUCKET/PREFIX or a shared folder (serve's --media), or set WMARK_MEDIA_URL" }).min(1),
  concurrency: positiveInt('--concurrency').default(1),
  threads: positiveInt('--threads').optional(),
  s3Endpoint: z.url({ error: '--s3-endpoint takes a URL, e.g. http://minio.internal:9000' }).optional(),
  s3Region: z.string().min(1).optional(),
  lockTimeout: positiveInt('--lock-timeout').optional(),
});
