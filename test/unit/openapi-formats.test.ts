/**
 * The formats and examples the OpenAPI document gives every module
 * (docs/user-guide.md "API explorer and OpenAPI document"; SPEC S16):
 * decimals with multipleOf 0.01, ids and refs with their module's
 * pattern, dates, times and date-times with theirs (input: the service
 * zone's form or ISO 8601 with an offset), typed filters and sort, and an
 * example on every body and record that validates against its schema
 * (Ajv, JSON Schema 2020-12 as OpenAPI 3.1 reads it).
 */
import { describe, expect, it } from 'vitest'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { loadRegistry } from '../../core/registry/load.js'
import { parseDateTime } from '../../core/time.js'
import { buildSchemas } from '../../generate/schemas.js'
import { FILE_ITEM, fileItemSchema } from '../../generate/read-schemas.js'
import { listQuerystring } from '../../generate/list-parameters.js'
import { DATE_PATTERN, DATETIME_INPUT_PATTERN, DATETIME_PATTERN, TIME_PATTERN, idPattern } from '../../generate/field-formats.js'
import { sortable } from '../../records/list-query.js'

type Schema = Record<string, any>
const registry = loadRegistry('modules.yaml')
const TZ = 'Europe/Madrid'
const ajv = new Ajv2020({ strict: false, allErrors: true })
const docs = registry.modules.map((mod) => ({ mod, doc: buildSchemas(mod, registry, TZ).doc as unknown as Record<'create' | 'update' | 'record' | 'expanded' | 'partial', Schema>, query: listQuerystring(mod, registry, TZ) as Schema }))

describe('the formats of every field', () => {
  it('decimals take multipleOf 0.01; refs, ids and instants their patterns, in bodies and records', () => {
    for (const { mod, doc } of docs) {
      for (const f of mod.fields) {
        // A ref of a record is its id or, with expandir, the related record: the id's schema is the first of anyOf.
        const id = (s: Schema | undefined): Schema | undefined => f.type === 'ref' ? s?.anyOf?.[0] ?? s : s
        const shown = [doc.create.properties[f.name], doc.update.properties[f.name], id(doc.record.properties[f.name]), id(doc.partial.properties[f.name])].filter((s) => s !== undefined)
        for (const s of shown) {
          if (f.type === 'decimal') expect(s.multipleOf, `${mod.name}.${f.name}`).toBe(0.01)
          if (f.type === 'ref') expect(s.pattern, `${mod.name}.${f.name}`).toBe(idPattern(registry.byName.get(f.ref!)!.prefix))
          if (f.type === 'date') expect(s.pattern).toBe(DATE_PATTERN)
          if (f.type === 'time') expect(s.pattern).toBe(TIME_PATTERN)
          if (f.type === 'datetime') expect(s.description, `${mod.name}.${f.name}`).toContain(TZ)
        }
        if (f.type === 'datetime') {
          expect(doc.create.properties[f.name].pattern).toBe(DATETIME_INPUT_PATTERN)
          expect(doc.record.properties[f.name].pattern).toBe(DATETIME_PATTERN)
        }
      }
      expect(doc.record.properties._id.pattern).toBe(idPattern(mod.prefix))
      expect(new RegExp(doc.record.properties._created_by.pattern).test('SISTEMA')).toBe(true)
    }
  })

  it('the date-time input pattern takes both forms the service reads, and what it refuses by shape', () => {
    const pattern = new RegExp(DATETIME_INPUT_PATTERN)
    for (const ok of ['2026-06-01 10:30:00', '2026-06-01T10:30:00+02:00', '2026-06-01T08:30Z', '2026-06-01T10:30:00.123456789-05:00']) {
      expect(parseDateTime(ok, TZ), ok).not.toBeNull()
      expect(pattern.test(ok), ok).toBe(true)
    }
    for (const bad of ['2026-06-01', '2026-06-01T10:30:00', '01/06/2026 10:30', '2026-06-01 10:30']) {
      expect(parseDateTime(bad, TZ), bad).toBeNull()
      expect(pattern.test(bad), bad).toBe(false)
    }
  })
})

describe('the list parameters', () => {
  it('a repeated equality filter is an array, enum filters take only the enum, [in] a typed list, sort its fields', () => {
    for (const { mod, query } of docs) {
      const p = query.properties as Record<string, Schema>
      for (const f of mod.fields.filter((x) => x.enum !== undefined && p[x.name] !== undefined && !x.encrypted)) {
        expect(p[f.name]!.type).toBe('array')
        expect(p[f.name]!.items.enum).toEqual(f.enum)
        const list = new RegExp(p[`${f.name}[in]`]!.pattern)
        expect(list.test(`${f.enum![0]},${f.enum!.at(-1)}`)).toBe(true)
        expect(list.test(`${f.enum![0]},no-es-un-valor`)).toBe(false)
      }
      for (const f of mod.fields.filter((x) => x.type === 'integer' && p[`${x.name}[in]`] !== undefined)) {
        expect(new RegExp(p[`${f.name}[in]`]!.pattern).test('1,2,-3')).toBe(true)
        expect(new RegExp(p[`${f.name}[in]`]!.pattern).test('1,dos')).toBe(false)
      }
      const sort = new RegExp(p.sort!.pattern)
      expect(sort.test(sortable(mod).map((s, i) => i % 2 === 0 ? `-${s}` : s).join(','))).toBe(true)
      expect(sort.test('_hash')).toBe(false)
      expect(sort.test('-_created,')).toBe(false)
    }
  })
})

describe('the examples', () => {
  it('every request body and record (whole and partial) has an example that validates against its own schema', () => {
    for (const { mod, doc } of docs) {
      for (const kind of ['create', 'update', 'record', 'expanded', 'partial'] as const) {
        const examples = doc[kind].examples as unknown[] | undefined
        expect(examples?.length, `${mod.name} ${kind}`).toBe(1)
        // A file field's items refer to the shared ArchivoAdjunto, as in the document's components.
        const check = ajv.compile({ ...doc[kind], $id: undefined, components: { schemas: { [FILE_ITEM]: fileItemSchema(TZ) } } })
        expect(check(examples![0]), `${mod.name} ${kind}: ${JSON.stringify(check.errors)}`).toBe(true)
      }
      // Every field a body can carry has an example value.
      expect(Object.keys((doc.create.examples as Schema[])[0]!).sort()).toEqual(mod.fields.map((f) => f.name).sort())
    }
  })
})
