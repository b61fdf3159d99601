// Parsed requests back into the API's bodies, for a remote service: a remote front end parses the same orders as the
// local one, and the service at the other end reads them from the wire as it reads any client's.
import type { VideoOrder, WatermarkBodyGiven, WatermarkOrder } from '../core/api-requests.js';
import type { ApiVersion } from '../core/api-version.js';
import { WmarkError } from '../core/errors.js';
import { encodeForensicContent } from '../core/forensic-payload.js';
import type { Setting } from '../core/setting-types.js';
import type { TemplateOrder } from '../core/template-schema.js';
import type { VideoRequestBody, WatermarkRequestBody } from '../service/watermark-service.js';

export function videoRequestBody(order: VideoOrder): VideoRequestBody {
  return { ...order };
}

export function templateRequestBody(order: TemplateOrder): Record<string, unknown> {
  const { name, ...rest } = order;
  return { ...(name !== undefined ? { name } : {}), ...rest };
}

/** A setting as the API writes it: a FORENSIC payload becomes its content in the version's encoding. */
function settingBody(setting: Setting, api: ApiVersion): Record<string, unknown> {
  if (setting.type !== 'FORENSIC') {
    const { image: _fetched, ...rest } = setting as Setting & { image?: unknown };
    return rest;
  }
  const content = encodeForensicContent(setting.payload, api);
  if (content === undefined) {
    throw new WmarkError('BAD_FORENSIC', `a FORENSIC payload of ${setting.payload} cannot be written as 2 ASCII characters, which API 1.0 requires`, {
      hint: 'Use API 2.0, or a payload whose two bytes are both below 128.',
    });
  }
  return { type: 'FORENSIC', content };
}

/** The order's request as its sender wrote it, or, for an order made in code, the whole order in the API's words. */
export function watermarkRequestBody(order: WatermarkOrder, api: ApiVersion): WatermarkRequestBody | WatermarkBodyGiven {
  if (order.asSent) return order.asSent;
  const { draw } = order;
  return {
    ...order.video,
    ...('settings' in draw
      ? { settings: draw.settings.map((s) => settingBody(s, api)) }
      : { settingsTemplateMapping: { id: draw.template.id, mappings: draw.template.mappings as Record<string, string> } }),
    containers: order.containers,
    ...(order.expirationSeconds !== undefined ? { expiration: order.expirationSeconds } : {}),
  };
}
