// How `wmark serve` logs on stderr: one JSON object per line (time, level, msg, and a request's reqId, method, route,
// status and ms) when stderr is not a terminal, for a log collector; readable lines at a terminal, as they always were,
// where a line per request shows only with --verbose. Every message loses its URLs' query strings and passwords first;
// --quiet leaves out what is only news (info), never a warning or an error.
import { jsonLogLine, type LogFields, type LogSink, type RequestRecord, requestFields, requestLine, scrubLogText } from '../core/log-record.js';
import type { CliIO } from './io.js';
import type { Output } from './output.js';

export interface ServeLog {
  /** JSON lines (stderr is not a terminal) or readable ones. */
  readonly json: boolean;
  log: LogSink;
  logRequest(record: RequestRecord): void;
}

export function serveLog(io: Pick<CliIO, 'stderr'>, output: Output, now: () => number = Date.now): ServeLog {
  const json = !io.stderr.isTTY;
  const { quiet, verbose } = output.options;
  const log = (message: string, fields: LogFields = {}) => {
    const level = fields.level ?? 'info';
    if (quiet && level === 'info') return;
    const text = scrubLogText(message);
    if (json) io.stderr.write(`${jsonLogLine(now(), text, fields)}\n`);
    else output.info(text);
  };
  return {
    json,
    log,
    logRequest(record) {
      if (json) log(requestLine(record), requestFields(record));
      else if (verbose && !quiet) output.debug(requestLine(record));
    },
  };
}
