/**
 * The announcements of the session cache's changes (stores/sessions/redis.ts,
 * `<prefix>cache:changed`), heard on a connection of their own, opened by
 * the first `listen`, and whether the link is whole: that connection
 * subscribed and the shared client ready. Whatever breaks the link (a
 * connection closed, reconnecting, a Redis that came back) is a change of
 * everything, since announcements may have been missed meanwhile.
 *
 * `generation` counts the changes heard: a value read from Redis under one
 * generation may be copied only if no change was heard before its answer
 * arrived (an announcement and the answer come over two connections, in
 * either order).
 */
import type { Redis } from 'ioredis'

export type ChangeListener = (keys: readonly string[] | '*') => void

export class CacheChanges {
  private subscriber: Redis | undefined
  private subscribed = false
  private readonly listeners: ChangeListener[] = []
  generation = 0

  constructor (private readonly client: Redis, private readonly channel: string) {}

  /**
   * Calls `fn` with the changed keys, or '*' for everything, until the
   * function returned is called; the first listener opens the connection,
   * the last one to leave closes it.
   */
  listen (fn: ChangeListener): () => void {
    this.listeners.push(fn)
    if (this.subscriber === undefined) this.start()
    return () => {
      const i = this.listeners.indexOf(fn)
      if (i >= 0) this.listeners.splice(i, 1)
      if (this.listeners.length === 0) this.close()
    }
  }

  /** Both connections up and listening: what is copied now will be told of its changes. */
  get whole (): boolean {
    return this.subscribed && this.client.status === 'ready'
  }

  /**
   * Resolves once every announcement Redis had sent before it has reached
   * this connection (a PING answers after them), and so has been written
   * to every other instance's connection too: a change awaited here is
   * answered after all instances were told. At once when not listening.
   */
  async delivered (): Promise<void> {
    const sub = this.subscriber
    if (sub === undefined || !this.subscribed) return
    try {
      await sub.ping()
    } catch {
      // The link broke meanwhile: every instance drops its copies on that.
    }
  }

  private close (): void {
    const sub = this.subscriber
    this.subscriber = undefined
    this.subscribed = false
    this.client.off('close', this.broken)
    this.client.off('ready', this.reconnected)
    sub?.disconnect()
  }

  private start (): void {
    // Waits for Redis while it is down, as the signals' subscriber does (stores/signals/redis.ts).
    const sub = this.subscriber = this.client.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null, commandTimeout: undefined, autoResubscribe: false, lazyConnect: true })
    sub.on('error', () => { /* reconnects by itself; the shared client reports the outage */ })
    sub.on('ready', () => {
      sub.subscribe(this.channel).then(() => {
        if (this.subscriber !== sub || sub.status !== 'ready') return
        this.subscribed = true
        this.changed('*')
      }, () => { /* the connection broke again: 'close' said so */ })
    })
    sub.on('message', (_channel: string, message: string) => { this.changed(message === '*' ? '*' : message.split(' ')) })
    sub.on('close', this.broken)
    this.client.on('close', this.broken)
    this.client.on('ready', this.reconnected)
    sub.connect().catch(() => { /* retried by ioredis */ })
  }

  private readonly broken = (): void => { this.subscribed = false; this.changed('*') }
  private readonly reconnected = (): void => { this.changed('*') }

  private changed (keys: readonly string[] | '*'): void {
    this.generation++
    for (const fn of this.listeners) fn(keys)
  }
}
