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
  /**
   * Sends `message` to every subscriber of `channel`; never rejects (a
   * failure is a lost signal). Resolves with how many instances'
   * subscriptions received it (Redis's PUBLISH answer), or undefined when
   * that is not known (the signal failed).
   */
  publish (channel: string, message: string): Promise<number | undefined>
  /**
   * Calls `fn` for each message on `channel` from now on; the function
   * returned unsubscribes. Once an instance's last listener of a channel
   * is gone, the channel no longer counts it as a receiver.
   */
  subscribe (channel: string, fn: SignalListener): Promise<() => void>
  /** Ends every subscription (the instance is closing). */
  close (): Promise<void>
}
