/**
 * The service's own keys: the blind-index key, the integrity key and the
 * checkpoint signing key (the Ed25519 seed of records/integrity/checkpoints.ts). Each
 * is 32 random bytes generated on first start and stored in `sys_claves`
 * wrapped (AES-256-GCM) by ENCRYPTION_KEY, so operators manage one secret,
 * and rotating it (npm run rotate-keys) re-wraps these without changing
 * them: blind indexes and `_hash` values stay valid.
 */
import { randomBytes } from 'node:crypto'
import { EntitySchema } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import { ConfigError } from '../core/errors.js'
import { createFieldCipher, keyIdOf, type FieldCipher, type MacKeys } from '../core/crypto.js'

export interface SystemKeyRow {
  nombre: string
  valor: string
  creada: Date
}

export const SystemKeyEntity = new EntitySchema<SystemKeyRow>({
  name: 'sys_clave',
  tableName: 'sys_claves',
  properties: {
    nombre: { type: 'string', length: 32, primary: true, fieldName: 'nombre' },
    valor: { type: 'text', fieldName: 'valor' },
    creada: { type: 'datetime', columnType: 'timestamptz', fieldName: 'creada' },
  },
})

export const SYSTEM_KEY_NAMES = ['indice', 'integridad', 'firma'] as const
type KeyName = typeof SYSTEM_KEY_NAMES[number]

/** Wrapping uses the field cipher format, with `sys_claves/<name>` as associated data. */
function wrapper (keys: readonly Buffer[]): FieldCipher {
  return createFieldCipher(keys, { indexKey: Buffer.alloc(32), integrityKey: Buffer.alloc(32) })
}

export interface SystemKeys extends MacKeys {
  /** Seed of the Ed25519 key that signs checkpoints of the global chain. */
  readonly signingSeed: Buffer
}

/** Reads (creating on first start) the blind-index, integrity and signing keys. */
export async function loadSystemKeys (em: EntityManager, keys: readonly Buffer[]): Promise<SystemKeys> {
  const wrap = wrapper(keys)
  const out: Partial<Record<KeyName, Buffer>> = {}
  for (const nombre of SYSTEM_KEY_NAMES) {
    let row = await em.findOne(SystemKeyEntity, { nombre }).catch((err: unknown) => { throw noSchema(err) })
    if (row === null) {
      const valor = wrap.encrypt(randomBytes(32).toString('base64'), 'sys_claves', nombre)
      // Instances starting together: the first insert wins, all read it back.
      await em.getConnection().execute('insert into "sys_claves" ("nombre", "valor", "creada") values (?, ?, now()) on conflict ("nombre") do nothing', [nombre, valor])
      row = await em.fork().findOneOrFail(SystemKeyEntity, { nombre })
    }
    out[nombre] = unwrap(wrap, nombre, row.valor)
  }
  return { indexKey: out.indice!, integrityKey: out.integridad!, signingSeed: out.firma! }
}

/** A database without the service's tables (an admin command before the first start): what to do, not the SQL error. */
function noSchema (err: unknown): unknown {
  const e = err as { code?: string, name?: string }
  if (e.code !== '42P01' && e.name !== 'TableNotFoundException') return err
  return new ConfigError('the database has no "sys_claves" table yet: its schema was never created. ' +
    'Run npm run migrate (or start the service once), then run the command again')
}

function unwrap (wrap: FieldCipher, nombre: string, valor: string): Buffer {
  try {
    return Buffer.from(wrap.decrypt(valor, 'sys_claves', nombre), 'base64')
  } catch {
    throw new ConfigError(`the ${nombre} key in table sys_claves is wrapped with encryption key ${String(keyIdOf(valor))}, ` +
      'which is neither ENCRYPTION_KEY nor one of ENCRYPTION_KEYS; start with the key it was written with (see docs/operator-guide.md, "Key rotation")')
  }
}

/** The start's key check without its writes (`npm run check`): how many stored keys the configured keys unwrap. */
export async function checkSystemKeys (em: EntityManager, keys: readonly Buffer[]): Promise<number> {
  const wrap = wrapper(keys)
  const rows = await em.find(SystemKeyEntity, {})
  for (const row of rows) unwrap(wrap, row.nombre, row.valor)
  return rows.length
}

/** Re-wraps the system keys with the current ENCRYPTION_KEY; returns how many changed. */
export async function rewrapSystemKeys (em: EntityManager, keys: readonly Buffer[]): Promise<number> {
  const wrap = wrapper(keys)
  let changed = 0
  for (const row of await em.find(SystemKeyEntity, {})) {
    if (keyIdOf(row.valor) === wrap.currentKeyId) continue
    const plain = wrap.decrypt(row.valor, 'sys_claves', row.nombre)
    await em.nativeUpdate(SystemKeyEntity, { nombre: row.nombre, valor: row.valor }, { valor: wrap.encrypt(plain, 'sys_claves', row.nombre) })
    changed++
  }
  return changed
}

/**
 * The blind-index scheme in force (docs/user-guide.md "Encryption"): 1, one index key for every
 * field (before); 2, one key per module and field (core/crypto.ts). Kept as
 * the `esquema_indice` row of `sys_claves`, wrapped like the keys (so
 * re-wrapping and the start's key check treat it alike); no row is 1.
 */
export const BLIND_INDEX_SCHEME = 2
const SCHEME_ROW = 'esquema_indice'

export async function blindIndexScheme (em: EntityManager, keys: readonly Buffer[]): Promise<number> {
  const row = await em.findOne(SystemKeyEntity, { nombre: SCHEME_ROW })
  return row === null ? 1 : Number(unwrap(wrapper(keys), SCHEME_ROW, row.valor).toString('utf8'))
}

export async function recordBlindIndexScheme (em: EntityManager, keys: readonly Buffer[], scheme: number): Promise<void> {
  const valor = wrapper(keys).encrypt(Buffer.from(String(scheme), 'utf8').toString('base64'), 'sys_claves', SCHEME_ROW)
  await em.getConnection().execute('insert into "sys_claves" ("nombre", "valor", "creada") values (?, ?, now()) on conflict ("nombre") do update set "valor" = excluded."valor"',
    [SCHEME_ROW, valor], 'run', em.getTransactionContext())
}
