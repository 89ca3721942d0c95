/** Record ids: `PREFIX-YYYY-NNNNN` (docs/user-guide.md "Records"); the sequence widens past 99,999. */

export function formatId (prefix: string, year: number, seq: number): string {
  return `${prefix}-${year}-${String(seq).padStart(5, '0')}`
}

/** The sequence number of an id, or undefined if it is not of that shape. */
export function sequenceOf (id: string): number | undefined {
  const m = /^[A-Z0-9]+-\d{4}-(\d{5,})$/.exec(id)
  return m === null ? undefined : Number(m[1])
}

/** Redis/memory key of one prefix-year counter. */
export function sequenceKey (prefix: string, year: number): string {
  return `${prefix}-${year}`
}
