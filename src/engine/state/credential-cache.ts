// Credentials an instance on a database server keeps for a few seconds, so a busy client's requests do not each read
// its key, and drops at once when the key is revoked anywhere: a revocation NOTIFYs every instance in its own
// transaction. One is kept only while this process LISTENs and no notice or drop came during its read; the LISTEN
// connection dropping empties the cache, which stays empty until it is back.
import type { BusWatcher } from './postgres-change-bus.js';
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

/** The part of the change bus the cache needs: its notices and drops, and whether it hears them now. */
export interface RevocationBus {
  watch(watcher: BusWatcher): void;
  readonly listening: boolean;
}

export class CredentialCache {
  private readonly kept = new Map<string, { record: CredentialRecord; at: number }>();
  /** Moves on with every revocation notice and every drop of the LISTEN connection. */
  private epoch = 0;
  private bus: RevocationBus | undefined;

  constructor(
    private readonly busOf: () => RevocationBus,
    private readonly now: () => number = Date.now,
  ) {}

  /** The credential, kept or read by `read`: an active one read while nothing could be missed is kept. */
  async read(clientId: string, read: () => Promise<CredentialRecord | undefined>): Promise<CredentialRecord | undefined> {
    const bus = this.listen();
    const now = this.now();
    const hit = this.kept.get(clientId);
    if (hit && now - hit.at < CREDENTIAL_CACHE_MS) return hit.record;
    const [epoch, listening] = [this.epoch, bus.listening];
    const record = await read();
    this.kept.delete(clientId);
    // A new or revoked key is read each time; an active one only while a revocation would reach this process.
    if (record && record.revokedOn === null && listening && bus.listening && epoch === this.epoch) {
      if (this.kept.size >= CREDENTIALS_KEPT) this.kept.delete(this.kept.keys().next().value!);
      this.kept.set(clientId, { record, at: now });
    }
    return record;
  }

  /** Forgets a key this process revoked, before its own notice comes back. */
  revoked(clientId: string): void {
    this.epoch++;
    this.kept.delete(clientId);
  }

  private listen(): RevocationBus {
    if (this.bus) return this.bus;
    const bus = this.busOf();
    bus.watch({
      message: (message) => {
        if (message.startsWith(REVOKED)) this.revoked(message.slice(REVOKED.length));
      },
      lost: () => {
        this.epoch++;
        this.kept.clear();
      },
    });
    this.bus = bus;
    return bus;
  }
}
