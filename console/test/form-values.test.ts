/**
 * A generated form's values (console/src/form-values.ts): a record's fields
 * as inputs hold them and back as the API takes them, an edit's body with
 * only what changed, and the checks GET /me/modulos states, in the API's
 * words. A check no rule states (a DNI's letter) is left to the API.
 */
import { describe, expect, it } from 'vitest'
import { FORMATS } from '../../core/field-types/formats/index.js'
import { bodyOf, formFields, fromInput, initialValues, problems, requiredNow, toInput } from '../src/form-values.js'
import { field, moduleOf } from './fields.js'

const dni = field('denunciante_dni', 'string', { formato: 'dni', patron: FORMATS.dni.pattern, max_longitud: 20 })
const telefono = field('telefono', 'string', { formato: 'telefono', patron: FORMATS.telefono.pattern, entrada: { tipo: 'tel', modo: 'tel' }, filtro: 'igual' })
const testigos = field('testigos', 'array', { elementos: [field('nombre', 'string', { obligatorio: true }), field('edad', 'integer', { min: 0 })] })
const mod = moduleOf([
  field('nombre', 'string', { obligatorio: true, max_longitud: 5 }),
  field('fecha', 'datetime', { por_defecto: 'now' }),
  field('importe', 'decimal', { formato: 'euros', min: 0, max: 1000 }),
  field('prioridad', 'string', { enum: ['alta', 'baja'], etiquetas_valores: { alta: 'Alta', baja: 'Baja' } }),
  field('urgente', 'boolean'),
  field('agente', 'ref', { ref: 'personal' }),
  field('estado', 'string', { enum: ['pendiente', 'cerrada'], por_defecto: 'pendiente' }),
  field('adjuntos', 'file'),
  dni, telefono, testigos,
], { campo_estado: 'estado', transiciones: [{ desde: 'pendiente', a: 'cerrada', requiere: [] }] })
const personal = moduleOf([], { nombre: 'personal', ruta: 'personal', prefijo: 'PER' })

describe('the form\'s fields', () => {
  it('leaves out files (uploaded on the record) and the state of a module with moves', () => {
    expect(formFields(mod).map((f) => f.nombre)).toEqual(['nombre', 'fecha', 'importe', 'prioridad', 'urgente', 'agente', 'denunciante_dni', 'telefono', 'testigos'])
  })

  it('asks for a user\'s password only when the user is created', () => {
    const users = moduleOf([field('username', 'string'), field('password', 'password', { obligatorio: true })], { nombre: 'usuarios', ruta: 'usuarios' })
    expect(formFields(users).map((f) => f.nombre)).toEqual(['username', 'password'])
    expect(formFields(users, true).map((f) => f.nombre)).toEqual(['username'])
  })

  it('a required field with a default is not required on a create', () => {
    expect(requiredNow(field('x', 'string', { obligatorio: true, por_defecto: 'a' }), false)).toBe(false)
    expect(requiredNow(field('x', 'string', { obligatorio: true, por_defecto: 'a' }), true)).toBe(true)
  })
})

describe('values to and from the inputs', () => {
  it('writes a record\'s values in Spanish and reads them back as the API takes them', () => {
    const record = { nombre: 'Ana', fecha: '2026-06-01 10:30:00', importe: 200.5, urgente: true, testigos: [{ nombre: 'Luis', edad: 40 }], telefono: '+34600112233' }
    const values = initialValues(mod, record)
    expect(values).toMatchObject({ nombre: 'Ana', fecha: '01/06/2026 10:30', importe: '200,50', urgente: true, prioridad: '', testigos: [{ nombre: 'Luis', edad: '40' }], telefono: '+34600112233' })
    expect(fromInput(mod.campos[1]!, values.fecha!)).toBe('2026-06-01 10:30:00')
    expect(fromInput(mod.campos[2]!, '1.234,5')).toBe(1234.5)
    expect(fromInput(testigos, [{ nombre: 'Luis', edad: '40' }, { nombre: 'Eva', edad: '' }])).toEqual([{ nombre: 'Luis', edad: 40 }, { nombre: 'Eva' }])
    expect(fromInput(field('lista', 'array'), 'uno\n\n dos ')).toEqual(['uno', 'dos'])
    // Unreadable: sent as typed, for the API to refuse.
    expect(fromInput(mod.campos[2]!, 'doscientos')).toBe('doscientos')
    expect(fromInput(mod.campos[0]!, '  ')).toBeNull()
  })

  it('a new record starts from the defaults, leaving `now` to the service\'s clock', () => {
    expect(initialValues(mod)).toMatchObject({ fecha: '', nombre: '' })
    expect(toInput(field('n', 'integer'), 3)).toBe('3')
  })

  it('a create sends what was filled in; an edit only what changed, never a restricted field', () => {
    const values = { ...initialValues(mod), nombre: 'Ana', importe: '10,5' }
    expect(bodyOf(mod, values, undefined, new Set())).toEqual({ nombre: 'Ana', importe: 10.5, urgente: false })
    const original = initialValues(mod, { nombre: 'Ana', telefono: '+34600112233', denunciante_dni: '12345678Z' })
    const edited = { ...original, telefono: '600 11 22 33', denunciante_dni: '00000000T' }
    expect(bodyOf(mod, edited, original, new Set(['denunciante_dni']))).toEqual({ telefono: '600 11 22 33' })
    expect(bodyOf(mod, { ...original, nombre: '' }, original, new Set())).toEqual({ nombre: null })
  })
})

describe('the checks GET /me/modulos states', () => {
  const check = (values: Record<string, unknown>, editing = false) => Object.fromEntries(problems(mod, { ...initialValues(mod), nombre: 'Ana', ...values } as never, [mod, personal], new Set(), editing))

  it('required, lengths, enum values, number limits and readings, in the API\'s words', () => {
    expect(check({ nombre: '' })).toEqual({ nombre: 'es obligatorio' })
    expect(check({ nombre: 'Ana María' })).toEqual({ nombre: 'admite como máximo 5 caracteres' })
    expect(check({ prioridad: 'media' })).toEqual({ prioridad: 'debe ser uno de: Alta, Baja' })
    expect(check({ importe: '2000' })).toEqual({ importe: 'debe ser como máximo 1000,00' })
    expect(Object.keys(check({ importe: 'mucho', fecha: '31/02/2026 10:00' })).sort()).toEqual(['fecha', 'importe'])
    expect(check({ agente: 'DEN-2026-00001' })).toEqual({ agente: 'no tiene el formato esperado' })
    expect(check({ agente: 'PER-2026-00001' })).toEqual({})
  })

  it('a sub-field\'s problem is named by its path, as the API\'s detalles', () => {
    expect(check({ testigos: [{ nombre: '', edad: '-1' }] })).toEqual({ 'testigos[0].nombre': 'es obligatorio', 'testigos[0].edad': 'debe ser como mínimo 0' })
  })

  it('a format\'s pattern (`patron`) is checked; a DNI\'s letter is not: the API says it', () => {
    expect(check({ denunciante_dni: '1234-5678' })).toEqual({ denunciante_dni: 'no tiene el formato esperado' })
    expect(check({ denunciante_dni: '12345678A' })).toEqual({})
    expect(check({ denunciante_dni: '12345678Z' })).toEqual({})
    expect(check({ telefono: '600-11-22-33' })).toEqual({ telefono: 'no tiene el formato esperado' })
    expect(check({ telefono: '+34 600 11 22 33' })).toEqual({})
  })

  it('an empty password on an edit keeps the stored one', () => {
    const users = moduleOf([field('password', 'password', { obligatorio: true })], { nombre: 'cuentas' })
    expect(Object.fromEntries(problems(users, { password: '' }, [], new Set(), true))).toEqual({})
    expect(Object.fromEntries(problems(users, { password: '' }, [], new Set(), false))).toEqual({ password: 'es obligatorio' })
  })
})
