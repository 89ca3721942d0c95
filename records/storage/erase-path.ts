/**
 * The write of an erasure of personal data (docs/decisions.md "Erasing
 * personal data keeps the chain: residual seals"), in the transaction that
 * read and locked the record: the certificate's paths null in every stored
 * version (history snapshots, then the live row), and the erasure as a new
 * version `suprimir` whose seal holds the certificate's digest.
 */
import type { Caller } from '../../core/access.js'
import type { FieldCipher } from '../../core/crypto.js'
import type { ModuleDef } from '../../core/registry/types.js'
import { nowSeconds } from '../../core/time.js'
import { valueColumn } from '../../db/columns.js'
import type { ErasureCertificate } from '../../db/history-entity.js'
import { historyEntries } from '../../db/history-statements.js'
import type { InsertColumn } from '../../db/insert-with-history.js'
import type { Row } from '../../db/module-entity.js'
import { updateRow } from '../../db/row-update.js'
import type { Db } from '../../db/statement.js'
import { rewriteHistoryEntry } from '../../db/stored-value-rewrites.js'
import { appendVersion, storedRowsChanged } from '../history.js'
import { certificateDigest, erasedColumns } from '../integrity/residue.js'
import { currentSeal } from '../integrity/seal-format.js'
import { versionHash } from '../integrity/version-hash.js'

export async function writeErasure (tem: Db, mod: ModuleDef, cipher: FieldCipher, columns: ReadonlyMap<string, InsertColumn>, caller: Caller, before: Row, certificate: ErasureCertificate): Promise<Row> {
  const id = before._id as string
  for (const entry of await historyEntries(tem, mod.name, id)) {
    const update = storedRowsChanged(entry, (row) => erasedColumns(mod, row, certificate.campos))
    if (update !== undefined) await rewriteHistoryEntry(tem, entry.id!, update)
  }
  const cleared = erasedColumns(mod, before, certificate.campos)
  const changes: Row = { ...cleared, _modified: nowSeconds(), _modified_by: caller.id, _version: (before._version as number) + 1 }
  const after: Row = { ...before, ...changes }
  after._hash = versionHash(mod, after, cipher, before._hash as string, currentSeal(mod), certificateDigest(certificate, cipher)).hash
  await updateRow(tem, mod.table, columns, id, { ...changes, _hash: after._hash })
  const campos = mod.fields.filter((f) => Object.hasOwn(cleared, valueColumn(f))).map((f) => f.name)
  await appendVersion(tem, mod, after, 'suprimir', campos, { ...before, ...cleared }, certificate)
  return after
}
