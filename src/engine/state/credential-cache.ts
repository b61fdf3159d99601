// Credentials an instance on a database server keeps for a few seconds, so a busy client's requests do not each read
// its key, and drops at once when the key is revoked anywhere: a revocation NOTIFYs every instance in its own
// transaction. One is kept only while this process LISTENs and no notice or drop came during its read; the LISTEN
// connection dropping empties the cache, which stays empty until it is back (kept-reads.ts).
import { KeptReads, type NoticeSource } from './kept-reads.js';
import type { CredentialRecord } from './state-store.js';

/**
 * How long an instance trusts a credential it read. Revocation does not wait for it; it only bounds what a notice lost
 * some other way (a connection that hangs without dropping) could cost.
 */
const CREDENTIAL_CACHE_MS = 10_000;
/** Credentials kept at most. */
const CREDENTIALS_KEPT = 10_000;
/** The notice a revocation sends: this prefix and the client id. */
export const REVOKED = 'credential-revoked ';

export class CredentialCache {
  private readonly kept: KeptReads<CredentialRecord | undefined>;

  constructor(
    busOf: () => NoticeSource,
    private readonly now: () => number = Date.now,
  ) {
    this.kept = new KeptReads(busOf, {
      lifetimeMs: CREDENTIAL_CACHE_MS,
      max: CREDENTIALS_KEPT,
      heard: (message) => {
        if (message.startsWith(REVOKED)) this.revoked(message.slice(REVOKED.length));
      },
    });
  }

  /** The credential, kept or read by `read`: an active one read while nothing could be missed is kept. */
  read(clientId: string, read: () => Promise<CredentialRecord | undefined>): Promise<CredentialRecord | undefined> {
    // A new or revoked key is read each time; an active one only while a revocation would reach this process.
    return this.kept.read(clientId, this.now(), read, (record) => record !== undefined && record.revokedOn === null);
  }

  /** Forgets a key this process revoked, before its own notice comes back. */
  revoked(clientId: string): void {
    this.kept.drop((id) => id === clientId);
  }
}
