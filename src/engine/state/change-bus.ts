// How processes on one database server tell each other that something moved on (the PostgreSQL store's NOTIFY).

/**
 * Short messages to every other process on the same database (a database server's notices), so a watcher in one
 * process wakes when another moves a job on.
 */
export interface ChangeBus {
  /** Sends a message to the other processes; best effort. */
  publish(message: string): void;
  /** Delivers other processes' messages (and this one's own) to `onMessage` from now on; once per bus. */
  listen(onMessage: (message: string) => void): void;
  close(): Promise<void>;
}
