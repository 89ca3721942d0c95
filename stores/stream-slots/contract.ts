/**
 * Open live streams per user, counted across instances
 * (docs/user-guide.md "Events: the live stream (eventos)"): a slot is a
 * lease that expires unless its stream renews it, so the slots of an
 * instance that died free up by themselves within one lease.
 */
export interface StreamSlotStore {
  /**
   * Takes one of `owner`'s `max` slots as `slot` for `leaseMs`; false when
   * `max` unexpired slots are held already. Taking a slot this owner
   * already holds renews it.
   */
  acquire (owner: string, slot: string, max: number, leaseMs: number): Promise<boolean>
  /** Frees a slot (the stream ended); nothing when it is no longer held. */
  release (owner: string, slot: string): Promise<void>
}
