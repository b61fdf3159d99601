// The package's library entry (`import { connect } from 'wmark'`): the typed client, its error type and the API's
// shapes. Everything else in the package is the CLI's and may change; README's "Use it from code" lists this surface.
import type { VideoRequestBody, WatermarkRequestBody } from './service/watermark-service.js';

export type { ApiVersion } from './core/api-version.js';
export { WmarkError } from './core/errors.js';
export type { CallOptions, IngestOptions, WatermarkOptions } from './library/client.js';
export { WmarkClient } from './library/client.js';
export type { ConnectOptions } from './library/connect.js';
export { connect } from './library/connect.js';
export type {
  TemplateResource,
  VideoRequestBody,
  VideoResource,
  WatchGoal,
  WatermarkRequestBody,
  WatermarkResource,
} from './service/watermark-service.js';

/** @deprecated The same type as `VideoRequestBody`, under its earlier name, kept so programs that import that name still build. */
export type VideoRequest = VideoRequestBody;
/** @deprecated The same type as `WatermarkRequestBody`, under its earlier name, kept so programs that import that name still build. */
export type WatermarkRequest = WatermarkRequestBody;
