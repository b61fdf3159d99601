// Typed errors shared by the CLI, the engine and the server: a stable code, a user-facing hint, an exit code and an HTTP status.

export type ErrorCategory = 'usage' | 'config' | 'auth' | 'remote' | 'engine' | 'timeout' | 'interrupted' | 'not-found' | 'conflict' | 'unprocessable' | 'forbidden' | 'gone' | 'unexpected';

const EXIT_CODES: Record<ErrorCategory, number> = {
  usage: 2,
  config: 3,
  auth: 4,
  remote: 5,
  engine: 6,
  timeout: 124,
  interrupted: 130,
  'not-found': 2,
  conflict: 2,
  unprocessable: 2,
  forbidden: 4,
  gone: 2,
  unexpected: 1,
};

const HTTP_STATUS: Record<ErrorCategory, number> = {
  usage: 400,
  config: 500,
  auth: 401,
  remote: 502,
  engine: 500,
  timeout: 504,
  interrupted: 503,
  'not-found': 404,
  conflict: 409,
  unprocessable: 422,
  forbidden: 403,
  gone: 410,
  unexpected: 500,
};

export interface WmarkErrorOptions {
  hint?: string;
  details?: string[];
  cause?: unknown;
  /** Overrides the category's default exit code (e.g. 6 for an ingest of a file that is not a video). */
  exitCode?: number;
  httpStatus?: number;
}

export class WmarkError extends Error {
  readonly code: string;
  readonly category: ErrorCategory;
  readonly hint?: string;
  readonly details: string[];
  readonly exitCode: number;
  readonly httpStatus: number;

  constructor(category: ErrorCategory, code: string, message: string, options: WmarkErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'WmarkError';
    this.category = category;
    this.code = code;
    this.hint = options.hint;
    this.details = options.details ?? [];
    this.exitCode = options.exitCode ?? EXIT_CODES[category];
    this.httpStatus = options.httpStatus ?? HTTP_STATUS[category];
  }

  toJSON(): { code: string; message: string; hint?: string; details?: string[] } {
    return {
      code: this.code,
      message: this.message,
      ...(this.hint ? { hint: this.hint } : {}),
      ...(this.details.length ? { details: this.details } : {}),
    };
  }
}

export const usageError = (code: string, message: string, options?: WmarkErrorOptions) => new WmarkError('usage', code, message, options);
export const engineError = (code: string, message: string, options?: WmarkErrorOptions) => new WmarkError('engine', code, message, options);
export const notFoundError = (code: string, message: string, options?: WmarkErrorOptions) => new WmarkError('not-found', code, message, options);

/** Issues from a validator become one usage error that lists every problem. */
export function validationError(code: string, issues: string[], hint?: string): WmarkError {
  const message = issues.length === 1 ? issues[0]! : `${issues.length} problems:\n  - ${issues.join('\n  - ')}`;
  return new WmarkError('usage', code, message, { details: issues, hint });
}

export function isWmarkError(error: unknown): error is WmarkError {
  return error instanceof WmarkError;
}
