/** Signals in process (one instance, or instances of one test process sharing the store as processes share Redis). */
import { EventEmitter } from 'node:events'
import type { SignalListener, SignalStore } from './contract.js'

export class MemorySignalStore implements SignalStore {
  private readonly bus = new EventEmitter().setMaxListeners(0)

  publish (channel: string, message: string): Promise<number | undefined> {
    // Asynchronous as over Redis: a publisher never runs a subscriber inside its own call.
    // Listeners, not instances, are counted here: what a publisher reads of it is whether any received it (records/events/feed-hub.ts).
    const receivers = this.bus.listenerCount(channel)
    queueMicrotask(() => { this.bus.emit(channel, message) })
    return Promise.resolve(receivers)
  }

  async subscribe (channel: string, fn: SignalListener): Promise<() => void> {
    this.bus.on(channel, fn)
    return () => { this.bus.off(channel, fn) }
  }

  async close (): Promise<void> {}
}
