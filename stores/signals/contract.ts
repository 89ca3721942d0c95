/**
 * Signals between instances (docs/architecture.md "Stores"): a message
 * published on a channel reaches every subscriber of that channel on every
 * instance, this one included, at most once and only while subscribed. The
 * event feed uses it to wake the instances that hold streams and
 * deliveries (records/events/feed-hub.ts); what a signal says can always
 * be read again from the database, so a lost one only delays.
 */
export type SignalListener = (message: string) => void

export interface SignalStore {
  /** Sends `message` to every subscriber of `channel`; never throws (a failure is a lost signal). */
  publish (channel: string, message: string): void
  /** Calls `fn` for each message on `channel` from now on; the function returned unsubscribes. */
  subscribe (channel: string, fn: SignalListener): Promise<() => void>
  /** Ends every subscription (the instance is closing). */
  close (): Promise<void>
}
