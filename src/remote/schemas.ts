// What the service's responses must contain (docs/api.md), checked with zod; every unknown field is kept.
import { z } from 'zod';

const containersSchema = z.looseObject({
  href: z.string().optional(),
  iframe: z.string().optional(),
  m3u8: z.string().optional(),
  mp4: z.string().optional(),
});

/** POST watermark (1.0 and 2.0), the 1.0 long-poll answer and the 2.0 resource link. */
export const watermarkResponseSchema = z.looseObject({
  status: z.string().min(1),
  containers: containersSchema.optional(),
  href: z.string().optional(),
});
export type RemoteWatermark = z.infer<typeof watermarkResponseSchema>;

/** The API leaves the token answer's field names open: `wmark serve` sends `{token, expiresIn}`; others pass too. */
export const tokenResponseSchema = z
  .looseObject({
    token: z.string().min(1).optional(),
    accessToken: z.string().min(1).optional(),
    access_token: z.string().min(1).optional(),
    expiresIn: z.number().positive().optional(),
    expires_in: z.number().positive().optional(),
  })
  .refine((b) => Boolean(b.token ?? b.accessToken ?? b.access_token), { message: 'no token in the response (expected a "token" field)' });

export const videoSchema = z.looseObject({
  id: z.string().min(1),
  key: z.string().optional(),
  status: z.string().optional(),
  sourceUrl: z.string().optional(),
});
export type RemoteVideo = z.infer<typeof videoSchema>;

export const templateSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string().optional(),
  description: z.string().nullable().optional(),
  settings: z.array(z.unknown()).optional(),
  placeholders: z.array(z.string()).optional(),
});
export type RemoteTemplate = z.infer<typeof templateSchema>;

export const templateListSchema = z.array(templateSchema);

/** Watermark statuses after which nothing changes. */
export const FINAL_STATUSES = new Set(['READY', 'FAILED']);
