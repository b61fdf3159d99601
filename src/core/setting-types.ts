// Watermark settings after validation (fields and units: docs/settings.md): their types, defaults and limits.

export type HAlign = 'LEFT' | 'CENTER' | 'RIGHT';
export type VAlign = 'TOP' | 'MIDDLE' | 'BOTTOM';

export interface MoveAnimation {
  type: 'MOVE';
  toX: number;
  toY: number;
  startTime: number;
  endTime: number;
}

export interface TextSetting {
  type: 'TEXT';
  content: string;
  x: number;
  y: number;
  align: HAlign;
  verticalAlign: VAlign;
  fontSize: number;
  fontColor: string;
  fontOpacity: number;
  shadowColor: string;
  shadowOpacity: number;
  shadowOffsetX: number;
  shadowOffsetY: number;
  animation?: MoveAnimation;
}

/** The image an IMAGE setting draws, as fetched and checked when its watermark was created (kept in the media store). */
export interface ImageRef {
  /** SHA-256 (hex) of the image's bytes: its media key (`images/<sha256>.<ext>`) follows from it. */
  sha256: string;
  format: ImageFormat;
  /** The image's own size in pixels. */
  width: number;
  height: number;
}

export type ImageFormat = 'png' | 'jpeg' | 'webp';

export interface ImageSetting {
  type: 'IMAGE';
  /** An http(s) URL or a file path, as requested (a path made absolute). */
  content: string;
  x: number;
  y: number;
  align: HAlign;
  verticalAlign: VAlign;
  /** The drawn width as a fraction of the frame width; the height keeps the image's aspect. */
  width: number;
  opacity: number;
  animation?: MoveAnimation;
  /** Filled in when the request is accepted (the bytes fetched and checked); absent in templates and before. */
  image?: ImageRef;
}

/** payload is the 16-bit value to embed, 0..65535. */
export interface ForensicSetting {
  type: 'FORENSIC';
  payload: number;
}

export type Setting = TextSetting | ImageSetting | ForensicSetting;

/** The settings that draw something visible, in drawing order. */
export type VisibleSetting = TextSetting | ImageSetting;

/**
 * A setting as stored in a template. TEXT and IMAGE content may hold placeholders; FORENSIC content is kept
 * as the raw string because it usually is a placeholder, and its meaning (ASCII vs base64) depends
 * on the API version of the request that renders it, not the one that created the template.
 */
export interface ForensicTemplateSetting {
  type: 'FORENSIC';
  content: string;
}

export type TemplateSetting = TextSetting | ImageSetting | ForensicTemplateSetting;

export const MAX_SETTINGS = 20;
export const MAX_CONTENT_CHARS = 1000;
export const MAX_ANIMATION_SECONDS = 86_400;
/** An IMAGE setting's content: a URL or a path. */
export const MAX_IMAGE_CONTENT_CHARS = 4096;

export const DEFAULTS = {
  x: 0.5,
  y: 0.5,
  fontSize: 0.05,
  fontOpacity: 0.3,
  fontColor: 'FFFFFF',
  shadowColor: '000000',
  shadowOpacity: 0.1,
  shadowOffsetX: 0.08,
  shadowOffsetY: 0.08,
  align: 'CENTER',
  verticalAlign: 'MIDDLE',
} as const satisfies Omit<TextSetting, 'type' | 'content' | 'animation'>;

export const IMAGE_DEFAULTS = { width: 0.2, opacity: 1 } as const satisfies Pick<ImageSetting, 'width' | 'opacity'>;

/** What an IMAGE may be: its bytes, and its size before and after scaling (a guard against decompression bombs). */
export const IMAGE_LIMITS = { maxBytes: 10 * 1024 * 1024, maxSide: 4096 } as const;

export const isVisible = (s: Setting): s is VisibleSetting => s.type === 'TEXT' || s.type === 'IMAGE';
