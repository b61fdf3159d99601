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

/** payload is the 16-bit value to embed, 0..65535. */
export interface ForensicSetting {
  type: 'FORENSIC';
  payload: number;
}

export type Setting = TextSetting | ForensicSetting;

/**
 * A setting as stored in a template. TEXT content may hold placeholders; FORENSIC content is kept
 * as the raw string because it usually is a placeholder, and its meaning (ASCII vs base64) depends
 * on the API version of the request that renders it, not the one that created the template.
 */
export interface ForensicTemplateSetting {
  type: 'FORENSIC';
  content: string;
}

export type TemplateSetting = TextSetting | ForensicTemplateSetting;

export const MAX_SETTINGS = 20;
export const MAX_CONTENT_CHARS = 1000;
export const MAX_ANIMATION_SECONDS = 86_400;

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
