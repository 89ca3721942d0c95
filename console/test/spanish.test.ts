/**
 * The console's Spanish formats and labels (console/src/spanish.ts,
 * console/src/modules.ts; docs/user-guide.md "Console"): what is shown,
 * what an input reads back as the API takes it — `200,50` is never 20050 —
 * and the names shown where modules.yaml gives no label. The browser tests
 * (test/browser/console-spanish.test.ts) see the same on screen.
 */
import { describe, expect, it } from 'vitest'
import { dateText, dateTimeInput, dateTimeText, monthText, numberInput, numberText, parseDate, parseDateTime, parseNumber, parseTime } from '../src/spanish.js'
import { fieldLabel, labelIn, singular, valueLabel, type ModuleInfo } from '../src/modules.js'

const NBSP = '\u00a0'

describe('shown', () => {
  it('writes dates dd/mm/aaaa and date-times dd/mm/aaaa hh:mm', () => {
    expect(dateText('2026-06-01')).toBe('01/06/2026')
    expect(dateTimeText('2026-06-01 10:30:15')).toBe('01/06/2026 10:30')
    expect(dateTimeInput('2026-06-01 10:30:15')).toBe('01/06/2026 10:30:15')
    expect(dateTimeInput('2026-06-01 10:30:00')).toBe('01/06/2026 10:30')
    expect(monthText('2026-03')).toBe('03/2026')
    // An instant with a zone: in the browser's (here the process's) zone.
    const d = new Date('2026-06-01T08:30:00Z')
    const two = (n: number): string => String(n).padStart(2, '0')
    expect(dateTimeText('2026-06-01T08:30:00Z')).toBe(`${two(d.getDate())}/${two(d.getMonth() + 1)}/${d.getFullYear()} ${two(d.getHours())}:${two(d.getMinutes())}`)
    expect(dateText('no es fecha')).toBe('no es fecha')
  })

  it('writes numbers with a decimal comma, decimals with two, amounts in euros', () => {
    expect(numberText(1234)).toBe('1234')
    expect(numberText(12345)).toBe('12.345')
    expect(numberText(200.5, 'decimal')).toBe('200,50')
    expect(numberText(1234567.8, 'decimal')).toBe('1.234.567,80')
    expect(numberText(200.5, 'euros')).toBe(`200,50${NBSP}€`)
    expect(numberText(12345.5, 'euros')).toBe(`12.345,50${NBSP}€`)
    expect(numberInput(12345.5, 'decimal')).toBe('12345,50')
    expect(numberInput(20000)).toBe('20000')
  })
})

describe('read back', () => {
  const value = (text: string, decimals: 0 | 2 = 2): unknown => { const p = parseNumber(text, decimals); return 'value' in p ? p.value : p.problem }

  it('takes a decimal comma or point, never making 200,50 into 20050', () => {
    expect(value('200,50')).toBe(200.5)
    expect(value('200.50')).toBe(200.5)
    expect(value('200,5')).toBe(200.5)
    expect(value(' 1.234,56 € ')).toBe(1234.56)
    expect(value('12 345,6')).toBe(12345.6)
    expect(value('-3,25')).toBe(-3.25)
    expect(value('20.000', 0)).toBe(20000)
    expect(value('1.234')).toBe(1234)
  })

  it('refuses what no one writes for a number, in Spanish', () => {
    expect(value('1,234')).toBe('admite como máximo dos decimales (por ejemplo, 200,50)')
    expect(value('1,5', 0)).toBe('debe ser un número entero (por ejemplo, 20000 o 20.000)')
    for (const text of ['abc', '1,2,3', '1.234.5', '0.500', '1.23.456', '12,', ',5', '']) expect(value(text), text).toBe('debe ser un número (por ejemplo, 200,50)')
  })

  it('reads dates in Spanish order (and the API\'s own), refusing days that do not exist', () => {
    expect(parseDate('01/06/2026')).toEqual({ value: '2026-06-01' })
    expect(parseDate('1/6/2026')).toEqual({ value: '2026-06-01' })
    expect(parseDate('29-02-2028')).toEqual({ value: '2028-02-29' })
    expect(parseDate('2026-06-01')).toEqual({ value: '2026-06-01' })
    for (const text of ['31/02/2026', '06/31/2026', '2026/06/01', '01/06/26', '00/01/2026']) {
      expect(parseDate(text), text).toEqual({ problem: 'debe ser una fecha válida dd/mm/aaaa (por ejemplo, 01/06/2026)' })
    }
    expect(parseDateTime('01/06/2026 9:05')).toEqual({ value: '2026-06-01 09:05:00' })
    expect(parseDateTime('01/06/2026, 10:30:15')).toEqual({ value: '2026-06-01 10:30:15' })
    expect(parseDateTime('2026-06-01T10:30')).toEqual({ value: '2026-06-01 10:30:00' })
    for (const text of ['01/06/2026', '01/06/2026 24:00', '06/13/2026 10:30', '01/06/2026 10:30 PM']) {
      expect(parseDateTime(text), text).toEqual({ problem: 'debe ser una fecha y hora válidas dd/mm/aaaa hh:mm (por ejemplo, 01/06/2026 10:30)' })
    }
    expect(parseTime('9:30')).toEqual({ value: '09:30' })
    expect(parseTime('23:60')).toEqual({ problem: 'debe ser una hora válida hh:mm, de 00:00 a 23:59 (por ejemplo, 09:30)' })
  })
})

describe('labels', () => {
  const mod = {
    nombre: 'denuncias', ruta: 'denuncias', prefijo: 'DEN', etiqueta: 'Denuncias', acciones: { ver: 'todos' }, transiciones: [], columnas: [],
    campos: [
      { nombre: 'fecha_hechos', tipo: 'datetime', obligatorio: true, cifrado: false, filtrable: true, buscable: false, unico: false },
      { nombre: 'estado', tipo: 'string', obligatorio: false, cifrado: false, filtrable: true, buscable: false, unico: false, enum: ['investigacion'], etiqueta: 'Estado', etiquetas_valores: { investigacion: 'En investigación' } },
      {
        nombre: 'testigos', tipo: 'array', obligatorio: false, cifrado: false, filtrable: false, buscable: false, unico: false,
        elementos: [{ nombre: 'dni', tipo: 'string', obligatorio: false, cifrado: true, filtrable: false, buscable: false, unico: false, etiqueta: 'DNI' }],
      },
    ],
  } as ModuleInfo

  it('shows a label where given and the name as a heading where not', () => {
    expect(fieldLabel(mod.campos[0]!)).toBe('Fecha hechos')
    expect(labelIn(mod, 'estado')).toBe('Estado')
    expect(labelIn(mod, '_created_by')).toBe('Creado por')
    expect(labelIn(mod, 'testigos.dni')).toBe('Testigos: DNI')
    expect(labelIn(mod, 'testigos[0].dni')).toBe('Testigo 1: DNI')
    expect(valueLabel(mod.campos[1], 'investigacion')).toBe('En investigación')
    expect(valueLabel(mod.campos[0], 'investigacion')).toBe('investigacion')
  })

  it('names one item of a list in the singular', () => {
    const cases: Record<string, string> = {
      Testigos: 'Testigo', 'Víctimas': 'Víctima', Agentes: 'Agente', Conductores: 'Conductor', Declaraciones: 'Declaración',
      Luces: 'Luz', 'Documentos adjuntos': 'Documento adjunto', 'Testigos de los hechos': 'Testigo de los hechos', Diligencias: 'Diligencia',
    }
    for (const [plural, one] of Object.entries(cases)) expect(singular(plural), plural).toBe(one)
  })
})
