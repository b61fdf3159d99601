// Opens the media store a --media URL names: a folder (this machine's, or a shared mount) or an S3-compatible bucket.
import { FolderMediaStore } from './folder-store.js';
import { type MediaStore, parseMediaUrl } from './media-store.js';
import { S3MediaStore, type S3StoreOptions } from './s3-store.js';

/** What an s3:// URL cannot say: where the server is and how to sign in (else the AWS SDK's usual sources). */
export type S3Access = Omit<S3StoreOptions, 'bucket' | 'prefix'>;

export function openMediaStore(url: string, s3: S3Access = {}): MediaStore {
  const location = parseMediaUrl(url);
  return location.kind === 'folder' ? new FolderMediaStore(location.root) : new S3MediaStore({ ...s3, bucket: location.bucket, prefix: location.prefix });
}
