/**
 * GET /me/modulos (docs/user-guide.md "The modules you may see"): the
 * modules the caller may `ver`, with their fields, states, the caller's
 * actions and a list's columns, as modules.yaml declares them at this
 * start. The console learns its screens from it; any client may.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { Type, type TProperties } from '@sinclair/typebox'
import { envelope } from '../http/schemas.js'
import { describeModules } from '../core/registry/module-description.js'
import { FORMATS } from '../core/field-types/formats/index.js'

const opt = Type.Optional
/** `dni (un string): DNI o NIE …`: every format of core/field-types/formats/, with the type it is for. */
const FORMAT_NAMES = Object.entries(FORMATS).map(([name, f]) => `${name} (un ${f.type}): ${f.description}`).join('. ')
const fieldProps: TProperties = {
  nombre: Type.String({ description: 'Nombre del campo en el JSON de un registro' }),
  etiqueta: Type.String({ description: 'Lo que lee una persona: la etiqueta declarada, o el nombre si no hay' }),
  ayuda: opt(Type.String({ description: 'Texto de ayuda para quien rellena el campo' })),
  tipo: Type.String({ description: 'string, text, integer, decimal, boolean, date, datetime, time, array, ref o password' }),
  obligatorio: Type.Boolean(), cifrado: Type.Boolean(), filtrable: Type.Boolean(), buscable: Type.Boolean(), unico: Type.Boolean(),
  enum: opt(Type.Array(Type.String())),
  etiquetas_valores: opt(Type.Record(Type.String(), Type.String(), { description: 'Etiqueta de cada valor de enum (el propio valor si no se declara)' })),
  ref: opt(Type.String({ description: 'Ruta del módulo al que apunta un campo ref' })),
  por_defecto: opt(Type.Union([Type.String(), Type.Number(), Type.Boolean()])),
  min: opt(Type.Number()), max: opt(Type.Number()),
  min_longitud: opt(Type.Integer()), max_longitud: opt(Type.Integer()),
  patron: opt(Type.String()),
  formato: opt(Type.String({ description: FORMAT_NAMES })),
  entrada: opt(Type.Object({
    tipo: Type.String({ description: 'type del input HTML (text, tel, email)' }),
    modo: opt(Type.String({ description: 'inputmode: el teclado en pantalla' })),
    autocompletar: opt(Type.String({ description: 'autocomplete del input' })),
    indicacion: opt(Type.String({ description: 'Lo que se dice bajo el campo' })),
  }, { description: 'Con formato: cómo pide el valor un formulario' })),
  filtro: opt(Type.String({ enum: ['igual', 'contiene', 'rango'], description: 'Con formato: cómo lo filtra un listado (el valor entero, una parte, o entre dos límites)' })),
  max_elementos: opt(Type.Integer()),
  descripcion: opt(Type.String()),
}
const ItemField = Type.Object(fieldProps)
const Field = Type.Object({ ...fieldProps, elementos: opt(Type.Array(ItemField, { description: 'Subcampos de los elementos de un array estructurado' })) })
const Scope = Type.String({ enum: ['todos', 'propios'] })
const ModuleInfo = Type.Object({
  nombre: Type.String(), ruta: Type.String(), prefijo: Type.String(), etiqueta: Type.String(),
  descripcion: opt(Type.String()),
  ayuda: opt(Type.String({ description: 'Texto de ayuda del módulo' })),
  acciones: Type.Object({ ver: Scope, crear: opt(Scope), editar: opt(Scope), eliminar: opt(Scope), descifrar: opt(Scope), exportar: opt(Scope), importar: opt(Scope) }, { description: 'Acciones que el usuario tiene en el módulo: sobre todos los registros o solo los propios' }),
  campo_estado: opt(Type.String()),
  transiciones: Type.Array(Type.Object({ desde: Type.String(), a: Type.String(), requiere: Type.Array(Type.String()) })),
  columnas: Type.Array(Type.String(), { description: 'Campos que un listado muestra junto a _id' }),
  campos: Type.Array(Field),
})

async function myModulesRoutes (app: FastifyInstance): Promise<void> {
  app.get('/me/modulos', {
    schema: {
      tags: ['Autenticación'],
      summary: 'Módulos que el usuario puede ver, con sus campos y sus acciones',
      operationId: 'getMyModules',
      response: { 200: envelope(Type.Array(ModuleInfo)) },
    },
  }, async (request) => {
    return { success: true, data: describeModules(app.registry, app.access, request.caller.rol) }
  })
}

export default fp(myModulesRoutes, { name: 'policia-my-modules-routes', fastify: '5.x', dependencies: ['policia-auth'] })
