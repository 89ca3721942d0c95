/**
 * A list's filters as data (console/src/filter-query.ts): which fields a
 * list filters and how, by type or as a field's format says (`filtro`), and
 * the address's parameters as the API takes them.
 */
import { describe, expect, it } from 'vitest'
import { filterFields, filterProblems, filterQuery } from '../src/filter-query.js'
import { field, moduleOf } from './fields.js'

const mod = moduleOf([
  field('estado', 'string', { enum: ['pendiente', 'cerrada'] }),
  field('urgente', 'boolean'),
  field('fecha_hechos', 'datetime'),
  field('dia', 'date'),
  field('hora', 'time'),
  field('importe', 'decimal', { formato: 'euros', filtro: 'rango' }),
  field('km', 'integer'),
  field('agente', 'ref', { ref: 'personal' }),
  field('lugar', 'string'),
  field('descripcion', 'text'),
  field('telefono', 'string', { formato: 'telefono', filtro: 'igual', entrada: { tipo: 'tel', modo: 'tel' } }),
  field('dni', 'string', { formato: 'dni', filtro: 'contiene' }),
  field('nif', 'string', { cifrado: true, buscable: true, filtrable: false }),
  field('notas', 'string', { filtrable: false }),
  field('testigos', 'array'),
])

describe('which fields and how', () => {
  it('by type; as a format says; never an encrypted or unfilterable one', () => {
    expect(filterFields(mod).map((f) => [f.nombre, f.kind])).toEqual([
      ['estado', 'choice'], ['urgente', 'boolean'], ['fecha_hechos', 'dates'], ['dia', 'dates'], ['hora', 'times'], ['importe', 'numbers'], ['km', 'numbers'],
      ['agente', 'ref'], ['lugar', 'contains'], ['descripcion', 'contains'], ['telefono', 'equals'], ['dni', 'contains'],
    ])
  })
})

describe('the address\'s filters as the API takes them', () => {
  const query = (q: string): string[][] => filterQuery(mod, new URLSearchParams(q))

  it('a choice, a reference and a whole value as they are; a part as contiene', () => {
    expect(query('estado=pendiente&agente=PER-2026-00001&telefono=600 11 22 33&lugar[contiene]=Mayor&dni[contiene]=5678')).toEqual([
      ['estado', 'pendiente'], ['agente', 'PER-2026-00001'], ['lugar[contiene]', 'Mayor'], ['telefono', '600 11 22 33'], ['dni[contiene]', '5678'],
    ])
  })

  it('yes/no only as true or false; empty parameters left out', () => {
    expect(query('urgente=true')).toEqual([['urgente', 'true']])
    expect(query('urgente=quizá&estado=')).toEqual([])
  })

  it('ranges typed in Spanish: a date-time range covers whole days, numbers in the API\'s form', () => {
    expect(query('fecha_hechos[gte]=01/06/2026&fecha_hechos[lte]=30/06/2026&importe[gte]=1.200,50&km[lte]=300&hora[gte]=08:30&dia[lte]=15/06/2026')).toEqual([
      ['fecha_hechos[gte]', '2026-06-01 00:00:00'], ['fecha_hechos[lte]', '2026-06-30 23:59:59'], ['dia[lte]', '2026-06-15'], ['hora[gte]', '08:30'],
      ['importe[gte]', '1200.5'], ['km[lte]', '300'],
    ])
  })

  it('a bound that does not read is left out of the request, and named in the API\'s words', () => {
    expect(query('dia[gte]=32/01/2026&importe[lte]=mucho')).toEqual([])
    const problems = filterProblems(mod, { 'dia[gte]': '32/01/2026', 'importe[lte]': 'mucho', 'km[gte]': '', 'hora[lte]': '10:00' })
    expect([...problems.keys()]).toEqual(['dia[gte]', 'importe[lte]'])
    for (const text of problems.values()) expect(text).toMatch(/^[a-zá-ú]/)
  })
})
