/**
 * The global chain's identity (docs/operator-guide.md "Tamper evidence: the global chain and checkpoints"): 16
 * random bytes (hex) made by the first start of a database and kept in
 * `sys_cadena_estado.cadena`, written into every checkpoint (format 2), so
 * that a checkpoint store shared by two databases — an embedded run and a
 * PostgreSQL run on one DATA_DIR, staging beside production — is told
 * apart from tampering. Not a secret: auditors read it from the database.
 */
import { randomBytes } from 'node:crypto'
import type { Db } from '../../db/statement.js'
import { ConfigError } from '../../core/errors.js'
import { hasChainIdColumn, keepChainId, storedChainId } from '../../db/global-chain-statements.js'
import { wellFormed } from './checkpoint-format.js'
import { CheckpointStore } from './checkpoint-store.js'

/** This database's chain identity, made on first call (instances starting together agree: the first write wins). */
export async function chainIdentity (em: Db): Promise<string> {
  const stored = await storedChainId(em).catch((err: unknown) => { throw noColumn(err) })
  if (stored != null) return stored
  return keepChainId(em, randomBytes(16).toString('hex')).catch((err: unknown) => { throw noColumn(err) })
}

/** A database whose schema predates the identity (an admin command before the upgraded service started once). */
function noColumn (err: unknown): unknown {
  const e = err as { code?: string, name?: string }
  if (e.code !== '42703' && e.code !== '42P01' && e.name !== 'InvalidFieldNameException' && e.name !== 'TableNotFoundException') return err
  return new ConfigError('the database has no chain identity column (sys_cadena_estado.cadena) yet: its schema predates this version. ' +
    'Run npm run migrate (or start the service once), then run the command again')
}

/** The refusal of a store shared with another deployment, with the fix. */
export function sharedStore (dir: string, cadena: string, foreign: ReadonlyArray<{ file: string, cadena: string | undefined }>): ConfigError {
  const others = [...new Set(foreign.map((f) => f.cadena ?? 'written before chain identities, not signed by this deployment\'s key'))]
  return new ConfigError(`CHECKPOINT_DIR ${dir} holds checkpoints of another chain (${others.join('; ')}), e.g. ${foreign[0]!.file}; ` +
    `this database's chain is ${cadena}. Two deployments (an embedded run and a PostgreSQL run on one DATA_DIR, staging beside production) ` +
    'must not share a checkpoint directory: set CHECKPOINT_DIR to a directory of this deployment\'s own, or move the other deployment\'s files out of this one')
}

/** This database's chain identity if it has one yet, without making it (`npm run check` writes nothing). */
export async function storedChainIdentity (em: Db): Promise<string | undefined> {
  if (!await hasChainIdColumn(em)) return undefined
  return await storedChainId(em) ?? undefined
}

/**
 * Format 2 files of CHECKPOINT_DIR naming another chain than `cadena` (none
 * yet: every format 2 file is another's, since the first start makes a new
 * one). Format 1 files need the signing key to tell; the start checks them.
 */
export function otherChainsFiles (dir: string, cadena: string | undefined): Array<{ file: string, cadena: string }> {
  const store = new CheckpointStore(dir)
  const out: Array<{ file: string, cadena: string }> = []
  for (const name of store.names()) {
    let c: unknown
    try { c = JSON.parse(store.read(name)) } catch { continue }
    if (wellFormed(c) && c.formato === 2 && c.cadena !== cadena) out.push({ file: store.path(name), cadena: c.cadena! })
  }
  return out
}
