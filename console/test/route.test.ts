/**
 * Where the console is (console/src/route.ts): the part of the address
 * after `#`, read into a path and parameters, and written back.
 */
import { describe, expect, it } from 'vitest'
import { href, routeOf } from '../src/route.js'

describe('an address read', () => {
  it('a list with its query, a record, a new record', () => {
    const list = routeOf('#/denuncias?q=bici&sort=-fecha_hechos&pagina=2')
    expect(list.path).toEqual(['denuncias'])
    expect(Object.fromEntries(list.params)).toEqual({ q: 'bici', sort: '-fecha_hechos', pagina: '2' })
    expect(routeOf('#/denuncias/DEN-2026-00001').path).toEqual(['denuncias', 'DEN-2026-00001'])
    expect(routeOf('#/denuncias/_nuevo').path).toEqual(['denuncias', '_nuevo'])
    expect(routeOf('#/denuncias/DEN-2026-00001/editar').path).toEqual(['denuncias', 'DEN-2026-00001', 'editar'])
  })

  it('no address, the start; segments decoded', () => {
    expect(routeOf('').path).toEqual([])
    expect(routeOf('#/').path).toEqual([])
    expect(routeOf('#/m%C3%B3dulo/a%2Fb').path).toEqual(['módulo', 'a/b'])
  })
})

describe('an address written', () => {
  it('each segment encoded, empty and missing parameters left out, and read back the same', () => {
    const written = href(['denuncias', 'a/b'], { q: 'Calle Mayor', pagina: '2', sort: '', estado: undefined })
    expect(written).toBe('#/denuncias/a%2Fb?q=Calle+Mayor&pagina=2')
    const back = routeOf(written)
    expect(back.path).toEqual(['denuncias', 'a/b'])
    expect(Object.fromEntries(back.params)).toEqual({ q: 'Calle Mayor', pagina: '2' })
    expect(href(['denuncias'])).toBe('#/denuncias')
  })
})
