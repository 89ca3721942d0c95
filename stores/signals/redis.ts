/**
 * Signals over Redis pub/sub, `<prefix>senal:<channel>`. Publishing uses
 * the shared client; a subscribed connection can run nothing else, so the
 * first subscription opens a second one (ioredis `duplicate`), which
 * re-subscribes by itself after a reconnection.
 */
import type { Redis } from 'ioredis'
import type { SignalListener, SignalStore } from './contract.js'

export class RedisSignalStore implements SignalStore {
  private subscriber: Redis | undefined
  private readonly listeners = new Map<string, Set<SignalListener>>()

  constructor (private readonly redis: Redis, private readonly prefix: string) {}

  private key (channel: string): string { return `${this.prefix}senal:${channel}` }

  publish (channel: string, message: string): Promise<number | undefined> {
    return this.redis.publish(this.key(channel), message).catch(() => undefined /* a lost signal: the readers poll too */)
  }

  async subscribe (channel: string, fn: SignalListener): Promise<() => void> {
    if (this.subscriber === undefined) {
      // Waits for Redis while it is down, unlike the shared client: a subscription must outlive an outage.
      this.subscriber = this.redis.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null, commandTimeout: undefined })
      this.subscriber.on('error', () => { /* reconnects by itself; the shared client reports the outage */ })
      this.subscriber.on('message', (key: string, message: string) => {
        for (const l of this.listeners.get(key) ?? []) l(message)
      })
    }
    const subscriber = this.subscriber
    const key = this.key(channel)
    let set = this.listeners.get(key)
    if (set === undefined) {
      this.listeners.set(key, set = new Set())
      await subscriber.subscribe(key)
    }
    set.add(fn)
    return () => {
      if (!set.delete(fn) || set.size > 0 || this.listeners.get(key) !== set) return
      // The last listener of the channel here: Redis stops counting this instance as a receiver.
      this.listeners.delete(key)
      if (this.subscriber === subscriber) subscriber.unsubscribe(key).catch(() => { /* closing, or Redis away: the channel goes with the connection */ })
    }
  }

  async close (): Promise<void> {
    const s = this.subscriber
    this.subscriber = undefined
    if (s !== undefined) s.disconnect()
  }
}
