// Public shapes of stored records, shared by CLI --json output and the HTTP API (DESIGN.md section 3).
import { templatePlaceholders } from '../core/placeholders.js';
import type { TemplateSetting } from '../core/setting-types.js';
import type { TemplateRecord, VideoRecord } from './store.js';

export interface VideoResource {
  id: string;
  key: string;
  sourceUrl: string;
  name: string | null;
  status: VideoRecord['status'];
  enableForensic: boolean;
  width: number | null;
  height: number | null;
  duration: number | null;
  frameRate: number | null;
  hasAudio: boolean;
  segments: number;
  createdOn: number;
  error?: string;
}

export function toVideoResource(v: VideoRecord): VideoResource {
  return {
    id: v.id,
    key: v.key,
    sourceUrl: v.sourceUrl,
    name: v.name,
    status: v.status,
    enableForensic: v.enableForensic,
    width: v.width,
    height: v.height,
    duration: v.durationSeconds,
    frameRate: v.fpsNum && v.fpsDen ? Number((v.fpsNum / v.fpsDen).toFixed(3)) : null,
    hasAudio: v.hasAudio,
    segments: v.segments.length,
    createdOn: v.createdOn,
    ...(v.error ? { error: v.error } : {}),
  };
}

export interface TemplateResource {
  id: string;
  name: string;
  description: string | null;
  settings: unknown[];
  placeholders: string[];
  createdOn: number;
}

export function toTemplateResource(t: TemplateRecord): TemplateResource {
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    settings: t.settings,
    placeholders: templatePlaceholders(t.settings as TemplateSetting[]),
    createdOn: t.createdOn,
  };
}
