// The records `wmark serve` logs: a message with what goes with it (a request's id, method, route, status and time),
// written as one JSON object per line for a log collector, or as a readable line for a person at a terminal. Pure:
// the caller says the time. What goes in a record is chosen by the server: route patterns, never raw paths or query
// strings, so no signature, token or key can reach a log.

type LogLevel = 'info' | 'warn' | 'error';

/** What a log line may carry beside its message. */
export interface LogFields {
  level?: LogLevel;
  /** The request it concerns (X-Request-Id, given or made). */
  reqId?: string;
  method?: string;
  /** The route pattern that answered (`/2.0/videos/:id`), never the path as sent. */
  route?: string;
  status?: number;
  /** Milliseconds from the request's arrival to the end of its answer. */
  ms?: number;
}

/** Where a server's messages go. */
export type LogSink = (message: string, fields?: LogFields) => void;

/** One finished request, as the access log and the metrics see it. */
export interface RequestRecord {
  reqId: string;
  method: string;
  route: string;
  status: number;
  ms: number;
}

/** The route label of a request that matched no route (a 404 or a refused path): one value, whatever was sent. */
export const NO_ROUTE = '(none)';

/** One JSON object: `time` (ISO 8601), `level`, `msg`, then the fields given, in a fixed order. */
export function jsonLogLine(time: number, message: string, fields: LogFields = {}): string {
  const { level = 'info', reqId, method, route, status, ms } = fields;
  return JSON.stringify({ time: new Date(time).toISOString(), level, msg: message, reqId, method, route, status, ms });
}

/** A finished request as a person reads it: `GET /2.0/videos 200 12 ms [req 4bf92f35]`. */
export function requestLine(r: RequestRecord): string {
  return `${r.method} ${r.route} ${r.status} ${r.ms} ms [req ${r.reqId}]`;
}

/** A request's record as log fields: its message is the readable line, its fields the same facts for a machine. */
export function requestFields(r: RequestRecord): LogFields {
  return { level: r.status >= 500 ? 'error' : 'info', reqId: r.reqId, method: r.method, route: r.route, status: r.status, ms: r.ms };
}

/**
 * An incoming X-Request-Id worth keeping: 1 to 128 characters of letters, digits and `-_.:+=/~` (what request id
 * schemes use: UUIDs, hex, base64), so that nothing a client sends can break a log line or a header.
 */
export function acceptedRequestId(value: string | undefined): string | undefined {
  return value !== undefined && /^[A-Za-z0-9\-_.:+=/~]{1,128}$/.test(value) ? value : undefined;
}

/**
 * A message made safe to log: every URL in it loses its query string (signatures, tokens, presigned credentials) and
 * its password (`postgres://user:***@host`). A message names what failed; what it was signed with is no one's business.
 */
export function scrubLogText(text: string): string {
  return text.replace(
    /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#"'<>]*@)?([^\s?#"'<>]*)(\?[^\s#"'<>]*)?/gi,
    (_all, scheme: string, auth = '', rest: string, query = '') => {
      const user = auth ? `${auth.slice(0, -1).split(':')[0]}${auth.includes(':') ? ':***' : ''}@` : '';
      return `${scheme}${user}${rest}${query ? '?…' : ''}`;
    },
  );
}

/** The methods a metric or log names as sent; any other is counted as OTHER (a client picks the method). */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export function methodLabel(method: string): string {
  return KNOWN_METHODS.has(method) ? method : 'OTHER';
}
