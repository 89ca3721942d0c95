/** Maps a path inside the parsed YAML document to a line number. */
import { isMap, isSeq, isScalar, type Document, type LineCounter, type Node } from 'yaml'

/**
 * Line (1-based) of the key or item at `path` (e.g. ['modules', 'denuncias',
 * 'fields', 'tipo']). When the path goes further than the document, the line
 * of the deepest node found is given.
 */
export function lineOf (doc: Document, lines: LineCounter, path: ReadonlyArray<string | number>): number | undefined {
  let node: unknown = doc.contents
  let offset: number | undefined = (node as Node | null)?.range?.[0]
  for (const seg of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg))
      if (pair === undefined) break
      offset = (pair.key as Node).range?.[0] ?? offset
      node = pair.value
    } else if (isSeq(node)) {
      const item = node.items[Number(seg)] as Node | undefined
      if (item === undefined) break
      offset = item.range?.[0] ?? offset
      node = item
    } else {
      break
    }
  }
  return offset === undefined ? undefined : lines.linePos(offset).line
}
