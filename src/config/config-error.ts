// The typed error for a bad config file, env var or flag: stable code, a message naming the culprit, a hint.

export interface ConfigErrorOptions {
  hint: string;
  /** The config file at fault, when the problem is in one. */
  file?: string;
  /** True when a command-line flag is at fault: a usage error (exit 2) rather than a configuration one (exit 3). */
  fromFlag?: boolean;
  /** The flag at fault (the first, when several are). */
  flag?: string;
  cause?: unknown;
}

export class ConfigError extends Error {
  // Stable so the CLI can map it to exit code 3 and `--json` error bodies without parsing messages.
  readonly code = 'CONFIG_INVALID' as const;
  readonly hint: string;
  readonly file?: string;
  readonly fromFlag: boolean;
  readonly flag?: string;

  constructor(message: string, options: ConfigErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ConfigError';
    this.hint = options.hint;
    this.fromFlag = options.fromFlag ?? false;
    if (options.flag !== undefined) this.flag = options.flag;
    if (options.file !== undefined) this.file = options.file;
  }
}
