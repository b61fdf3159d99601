// The shared media store's flags, the same for `wmark serve`, `wmark worker` and `wmark doctor`: --media, --s3-endpoint
// and --s3-region, else WMARK_MEDIA_URL, WMARK_S3_ENDPOINT, WMARK_S3_REGION or media.* in the config file.
import type { Command } from 'commander';
import type { ResolvedConfig } from '../config/load-config.js';

export interface MediaFlags {
  media?: string | undefined;
  s3Endpoint?: string | undefined;
  s3Region?: string | undefined;
}

/** Adds the three options; `what` says what the command does with the store. */
export function addMediaOptions(command: Command, what: string): Command {
  return command
    .option('--media <url>', `${what}: s3://BUCKET/PREFIX or a folder every machine mounts (env WMARK_MEDIA_URL, config media.url)`)
    .option(
      '--s3-endpoint <url>',
      "an S3-compatible server (MinIO, Ceph, R2); default AWS or AWS_ENDPOINT_URL_S3 (env WMARK_S3_ENDPOINT). Credentials: the AWS SDK's usual env vars or profile",
    )
    .option('--s3-region <region>', "the bucket's region (default AWS_REGION, the profile, or us-east-1 with --s3-endpoint; env WMARK_S3_REGION)");
}

/**
 * The flags given, each else from the environment or config file. The flags do not go through the config's checks:
 * a bad --media is BAD_MEDIA_URL where the store is opened, and the commands check --s3-endpoint themselves.
 */
export function mediaFlags(flags: MediaFlags, config: ResolvedConfig): MediaFlags {
  return {
    media: flags.media ?? config.media?.url,
    s3Endpoint: flags.s3Endpoint ?? config.media?.s3Endpoint,
    s3Region: flags.s3Region ?? config.media?.s3Region,
  };
}
