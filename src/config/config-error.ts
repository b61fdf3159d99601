// The typed error for a bad config file, env var or flag: stable code, a message naming the culprit, a hint.

export interface ConfigErrorOptions {
  hint: string;
  /** The config file at fault, when the problem is in one. */
  file?: string;
  cause?: unknown;
}

export class ConfigError extends Error {
  // Stable so the CLI can map it to exit code 3 and `--json` error bodies without parsing messages.
  readonly code = 'CONFIG_INVALID' as const;
  readonly hint: string;
  readonly file?: string;

  constructor(message: string, options: ConfigErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ConfigError';
    this.hint = options.hint;
    if (options.file !== undefined) this.file = options.file;
  }
}
