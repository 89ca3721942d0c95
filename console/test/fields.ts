/** Fields and modules as GET /me/modulos describes them, for the console's unit tests. */
import type { FieldInfo, ModuleInfo } from '../src/modules.js'

export function field (nombre: string, tipo: string, more: Partial<FieldInfo> = {}): FieldInfo {
  return { nombre, tipo, obligatorio: false, cifrado: false, filtrable: tipo !== 'text' && tipo !== 'array', buscable: false, unico: false, ...more }
}

export function moduleOf (campos: FieldInfo[], more: Partial<ModuleInfo> = {}): ModuleInfo {
  return { nombre: 'denuncias', ruta: 'denuncias', prefijo: 'DEN', etiqueta: 'Denuncias', acciones: { ver: 'todos', crear: 'todos' }, transiciones: [], columnas: [], campos, ...more }
}
