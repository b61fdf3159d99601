// The two versions of the Video Watermarking Service API (docs/api.md): the first path segment of every route.

export const API_VERSIONS = ['1.0', '2.0'] as const;
export type ApiVersion = (typeof API_VERSIONS)[number];
