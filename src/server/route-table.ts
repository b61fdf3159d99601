// The route table: paths (find-my-way) to plain-data handlers, with the methods each path allows and whether its
// answers carry CORS headers (signed links that players fetch cross-origin).
import FindMyWay from 'find-my-way';
import type { Params, RouteHandler } from './http-types.js';

interface RouteStore {
  handler: RouteHandler;
  cors: boolean;
  /** The path pattern it was added under: what logs and metrics name (ids and keys stay out of them). */
  route: string;
}

export type RouteMatch =
  | { kind: 'found'; handler: RouteHandler; params: Params; cors: boolean; allowed: string[]; route: string }
  /** The path exists but not for this method. */
  | { kind: 'method'; cors: boolean; allowed: string[]; route: string };

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export class Routes {
  private readonly router = FindMyWay({ caseSensitive: true, ignoreTrailingSlash: false, ignoreDuplicateSlashes: false, maxParamLength: 2048 });
  /** Every method and path added, in order (what docs/api.md must describe). */
  readonly list: { method: string; path: string }[] = [];

  add(methods: (typeof METHODS)[number][], paths: string[], handler: RouteHandler, options: { cors?: boolean } = {}): void {
    for (const method of methods) for (const path of paths) this.list.push({ method, path });
    for (const path of paths) {
      const store: RouteStore = { handler, cors: options.cors ?? false, route: path };
      for (const method of methods) this.router.on(method, path, () => undefined, store);
    }
  }

  match(method: string, path: string): RouteMatch | undefined {
    const allowed: string[] = [];
    let hit: { store: RouteStore; params: Params } | undefined;
    let cors = false;
    let route = '';
    for (const m of METHODS) {
      const found = this.router.find(m, path);
      if (!found) continue;
      allowed.push(m);
      const store = found.store as RouteStore;
      cors ||= store.cors;
      route ||= store.route;
      if (m === method) hit = { store, params: found.params };
    }
    if (!allowed.length) return undefined;
    if (!hit) return { kind: 'method', cors, allowed, route };
    return { kind: 'found', handler: hit.store.handler, params: hit.params, cors: hit.store.cors || cors, allowed, route: hit.store.route };
  }
}

/** One spelling of a route: the API version whose handler answers it, and whether it is API 0.1's spelling. */
export interface VersionedPaths {
  version: '1.0' | '2.0';
  paths: string[];
  /** API 0.1, the oldest SDKs' generation: the 1.0 handler at the root (`/x`) and under `/0.1/x` (docs/api.md). */
  legacy: boolean;
}

/**
 * Both API versions' spelling of a route: `/1.0/x` and `/2.0/x`, with a trailing slash too when asked; with `legacy`,
 * also API 0.1's `/x` and `/0.1/x`, served by the 1.0 handler (its bodies and answers are 1.0's).
 */
export function versioned(path: string, options: { trailingSlash?: boolean; legacy?: boolean } = {}): VersionedPaths[] {
  const spell = (p: string) => (options.trailingSlash ? [p, `${p}/`] : [p]);
  const spellings: VersionedPaths[] = (['1.0', '2.0'] as const).map((version) => ({ version, paths: spell(`/${version}${path}`), legacy: false }));
  if (options.legacy) spellings.push({ version: '1.0', paths: [...spell(path), ...spell(`/0.1${path}`)], legacy: true });
  return spellings;
}

/** Whether a request path is one of API 0.1's spellings: every other route lives under `/1.0/` or `/2.0/`. */
export function isLegacyPath(path: string): boolean {
  return !/^\/(1\.0|2\.0)(\/|$)/.test(path);
}
