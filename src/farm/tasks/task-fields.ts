// Fields every kind of render-farm task shares, checked alike on arrival: media keys that cannot leave the store,
// the planning wmark version, and the x264 settings.
import { z } from 'zod';
import { checkKey } from '../../media/media-store.js';

export const keySchema = z.string().refine((key) => {
  try {
    checkKey(key);
    return true;
  } catch {
    return false;
  }
}, 'not a media key');

/** The wmark version that planned the task: a worker of another version refuses it (its output could differ). */
export const versionSchema = z.string().min(1);

export const encodeSchema = z.object({ preset: z.string().regex(/^[a-z]+$/), crf: z.number().min(0).max(51) });
