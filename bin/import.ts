/**
 * `npm run import -- <module> <file>` (`node dist/bin/import.js` in the
 * image): what `POST /{module}/importar` does, from the command line
 * (docs/operator-guide.md "Importing records (npm run import)"): every
 * row validated as a POST's body, all or nothing, `--simular` only
 * reports; a progress bar on standard error, the summary and the problems
 * by row and field at the end. Runs through the records layer as the user
 * named by --usuario (default: the first superadmin created), who must
 * hold the module's `importar`.
 */
import { createReadStream, statSync } from 'node:fs'
import { extname } from 'node:path'
import { parseArgs } from 'node:util'
import { pathToFileURL } from 'node:url'
import cliProgress from 'cli-progress'
import type { Caller } from '../core/access.js'
import { AppError, ConfigError } from '../core/errors.js'
import { findRows } from '../db/row-query.js'
import { rowValidator } from '../generate/row-validator.js'
import { refusal } from '../records/import-rows.js'
import type { ImportFormat } from '../records/import-source.js'
import { IMPORT_ENCODINGS, type ImportEncoding } from '../records/import-text.js'
import { usersTable } from '../records/users/users-table.js'
import { withRecords, type RecordsSession, type SessionOptions } from './lib/records-session.js'

const HELP = `npm run import -- <module> <file> [--simular] [--usuario <username>] [--separador ';'] [--formato csv|ndjson] [--codificacion windows-1252]
(in the image: node dist/bin/import.js <module> <file> …)

Imports the records of <file> into <module> (its name, e.g. denuncias) as
POST /<module>/importar does: a CSV in the export's dialect (UTF-8 with or
without BOM, a header row of field names, ',' or ';' between cells) or
NDJSON (one JSON object per line). Every row is validated as a POST's body;
then all rows are created in one transaction, or none is. Uses
DATABASE_URL (or the embedded database under DATA_DIR, which serves one
process: stop npm start first), REDIS_URL, ENCRYPTION_KEY and MODULES_FILE
like the service.

  --simular             validate and check every row, write nothing
  --usuario <username>  the user the records are created by (it needs the
                        module's importar); default: the first superadmin
  --separador ';'       CSV separator (default: the one of the header line)
  --formato csv|ndjson  default: from the file's extension (.csv; .ndjson,
                        .jsonl), else csv
  --codificacion <enc>  the file's encoding: utf-8 (default), windows-1252
                        (what Spanish Excel writes) or iso-8859-1; a byte
                        not valid in it refuses the file, naming the line

At most IMPORT_MAX_ROWS records (default 100000) per file: split larger ones.

Exit status: 0 imported (or, with --simular, no problem found); 1 problems
found (listed by row and field; nothing written), or the import failed;
2 wrong usage.
`

export interface ImportCliOptions extends SessionOptions {
  out?: (text: string) => void
  err?: (text: string) => void
  /** A progress bar on standard error (default: when it is a terminal). */
  progress?: boolean
}

class Usage extends Error {}

/** The caller the records are created by: the named user, or the first superadmin. */
/** The file's chunks, each counted as the import reads it. */
async function * counted (input: AsyncIterable<Buffer>, onChunk: (bytes: number) => void): AsyncGenerator<Buffer> {
  for await (const chunk of input) {
    onChunk(chunk.length)
    yield chunk
  }
}

async function callerOf ({ em, registry, records }: RecordsSession, username: string | undefined): Promise<Caller> {
  const table = usersTable(registry)
  const supers = (registry.usersModule.fieldMap.get('rol')!.enum ?? []).filter((r) => records.access.isSuper(r))
  const rows = username !== undefined
    ? await findRows(em, table.entity, { [table.column('username')]: username, _deleted: null }, { limit: 1 })
    : await findRows(em, table.entity, { [table.column('rol')]: { $in: supers }, [table.column('activo')]: true, _deleted: null }, { orderBy: [{ _created: 'asc' }, { _id: 'asc' }], limit: 1 })
  if (rows[0] === undefined) throw new ConfigError(username !== undefined ? `no user named "${username}" (see: npm run users -- list)` : 'no active superadmin: name the user with --usuario')
  const user = table.snapshot(rows[0])
  if (!user.activo) throw new ConfigError(`user "${user.username}" is deactivated`)
  return { id: user.id, username: user.username, rol: user.rol, personalId: user.personalId }
}

export async function runImport (argv: readonly string[], opts: ImportCliOptions = {}): Promise<number> {
  const out = opts.out ?? ((t: string) => { process.stdout.write(t) })
  const err = opts.err ?? ((t: string) => { process.stderr.write(t) })
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        simular: { type: 'boolean' },
        usuario: { type: 'string' },
        separador: { type: 'string' },
        formato: { type: 'string' },
        codificacion: { type: 'string' },
      },
    })
    if (values.help === true) { out(HELP); return 0 }
    if (positionals.length !== 2) throw new Usage('give a module and a file')
    const [moduleName, file] = positionals as [string, string]
    if (values.separador !== undefined && values.separador !== ',' && values.separador !== ';') throw new Usage('--separador is , or ;')
    if (values.formato !== undefined && values.formato !== 'csv' && values.formato !== 'ndjson') throw new Usage('--formato is csv or ndjson')
    if (values.codificacion !== undefined && !(IMPORT_ENCODINGS as readonly string[]).includes(values.codificacion)) throw new Usage(`--codificacion is ${IMPORT_ENCODINGS.join(', ')}`)
    const format: ImportFormat = (values.formato as ImportFormat | undefined) ?? (['.ndjson', '.jsonl'].includes(extname(file).toLowerCase()) ? 'ndjson' : 'csv')
    const size = statSync(file).size
    const printProblems = (e: AppError): void => { for (const d of e.detalles ?? []) out(`  ${d.campo}: ${d.mensaje}\n`) }
    // What the import left out without refusing the file (a CSV's file fields).
    const printNotes = (avisos: ReadonlyArray<{ fila: number, campo: string, mensaje: string }> = []): void => { for (const a of avisos) out(`  note: ${a.campo}: ${a.mensaje}\n`) }
    return await withRecords(opts, err, async (session) => {
      const mod = session.registry.byName.get(moduleName)
      if (mod === undefined) throw new Usage(`unknown module "${moduleName}"; modules: ${session.registry.modules.map((m) => m.name).join(', ')}`)
      const caller = await callerOf(session, values.usuario)
      const bar = (opts.progress ?? process.stderr.isTTY) ? new cliProgress.SingleBar({ format: ' {bar} {percentage}% | {fase} | {value}/{total}', stream: process.stderr, hideCursor: true }, cliProgress.Presets.shades_classic) : undefined
      bar?.start(size, 0, { fase: 'reading and validating (bytes)' })
      // Counted as it is read: a 'data' listener would start the file flowing before the import reads it, losing its first chunks.
      const input = counted(createReadStream(file), (n) => { bar?.increment(n) })
      let writing = false
      try {
        const answer = await session.records.forRequest({ em: session.em, reads: session.em, caller, route: () => `npm run import ${mod.name}` }).of(mod).import({
          input,
          format,
          simular: values.simular === true,
          validate: rowValidator(mod, session.registry, session.config.timeZone),
          maxRows: session.config.importMaxRows,
          ...(values.codificacion !== undefined && { encoding: values.codificacion as ImportEncoding }),
          ...(values.separador !== undefined && { separador: values.separador as ',' | ';' }),
          onWrite: (done, total) => {
            if (!writing) { writing = true; bar?.start(total, 0, { fase: 'writing (records)' }) }
            bar?.update(done)
          },
        })
        bar?.stop()
        if (answer.simulado) {
          const r = answer.informe
          out(`${mod.name}: ${r.filas} rows read, ${r.validas} valid, ${r.errores.length + r.errores_omitidos} problems (nothing written: --simular).\n`)
          printProblems(refusal(r))
          if (r.errores_omitidos > 0) out(`  … and ${r.errores_omitidos} more.\n`)
          printNotes(r.avisos)
          return r.errores.length > 0 ? 1 : 0
        }
        const d = answer.hecho
        out(`${mod.name}: ${d.creados} records created by ${caller.username}${d.ids.length > 0 ? `, ${d.ids[0]!} to ${d.ids.at(-1)!}` : ''}.\n`)
        printNotes(d.avisos)
        return 0
      } catch (e) {
        bar?.stop()
        if (!(e instanceof AppError)) throw e
        out(`${mod.name}: nothing imported: ${e.message}\n`)
        printProblems(e)
        return 1
      }
    })
  } catch (e) {
    if (e instanceof Usage || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') === true) {
      err(`${(e as Error).message}\n\n${HELP}`)
      return 2
    }
    err(`${e instanceof ConfigError ? e.message : `failed: ${e instanceof Error ? e.message : String(e)}`}\n`)
    return 1
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runImport(process.argv.slice(2)).then((code) => process.exit(code), (e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`)
    process.exit(1)
  })
}
