/**
 * Every error the service can answer with: code, HTTP status and the exact
 * Spanish text of docs/user-guide.md "Errors". Nothing else in the code base invents error text;
 * the single error handler (plugins/error-handler.ts) maps these to the
 * `{success: false, error, codigo}` envelope (`codigo`: the code, for programs). docs/user-guide.md "Errors" lists this table.
 */

export interface ErrorDetail {
  campo: string
  mensaje: string
}

export const ERRORS = {
  DATOS_REQUERIDOS: { status: 400, message: 'Datos requeridos' },
  DATOS_INVALIDOS: { status: 400, message: 'Datos inválidos' },
  JSON_MAL_FORMADO: { status: 400, message: 'JSON mal formado' },
  PETICION_MAL_FORMADA: { status: 400, message: 'Petición HTTP mal formada' },
  TOKEN_NO_PROPORCIONADO: { status: 401, message: 'Token no proporcionado' },
  TOKEN_INVALIDO: { status: 401, message: 'Token inválido o expirado' },
  CREDENCIALES_INVALIDAS: { status: 401, message: 'Credenciales inválidas' },
  SIN_PERMISOS: { status: 403, message: 'Sin permisos para esta operación' },
  REGISTRO_NO_ENCONTRADO: { status: 404, message: 'Registro no encontrado' },
  MODULO_NO_ENCONTRADO: { status: 404, message: 'Módulo no encontrado' },
  /** A file id the record's file field does not hold (docs/user-guide.md "Evidence files"). */
  ARCHIVO_NO_ENCONTRADO: { status: 404, message: 'Archivo no encontrado' },
  RUTA_NO_ENCONTRADA: { status: 404, message: 'Ruta no encontrada' },
  /** A method the path does not have, with `Allow` naming those it has (docs/user-guide.md "Errors"). */
  METODO_NO_PERMITIDO: { status: 405, message: 'Método no permitido en esta ruta' },
  CONFLICTO_VERSION: { status: 409, message: 'Conflicto de versión' },
  REGISTRO_DUPLICADO: { status: 409, message: 'Registro duplicado' },
  TRANSICION_NO_PERMITIDA: { status: 409, message: 'Transición de estado no permitida' },
  /** The first request with this Idempotency-Key still runs; with Retry-After (docs/user-guide.md "Retries and Idempotency-Key"). */
  PETICION_EN_CURSO: { status: 409, message: 'Petición en curso con esta clave de idempotencia' },
  /** An erasure of a record none of whose versions holds personal data (docs/user-guide.md "Personal data"). */
  SIN_DATOS_PERSONALES: { status: 409, message: 'El registro no tiene datos personales que suprimir' },
  /** Blocking in a module no field of which is personal (docs/user-guide.md "Personal data"). */
  MODULO_SIN_DATOS_PERSONALES: { status: 409, message: 'El módulo no guarda datos personales: no hay nada que bloquear' },
  /** Prolonging in a module without `conservacion` (docs/user-guide.md "Personal data"). */
  MODULO_SIN_CONSERVACION: { status: 409, message: 'El módulo no declara un plazo de conservación' },
  REGISTRO_YA_BLOQUEADO: { status: 409, message: 'El registro ya está bloqueado' },
  REGISTRO_NO_BLOQUEADO: { status: 409, message: 'El registro no está bloqueado' },
  /** An erasure of a record whose chain does not hold: nothing is erased (docs/decisions.md "Erasing personal data keeps the chain"); `detalles` say where. */
  INTEGRIDAD_NO_VERIFICADA: { status: 409, message: 'La cadena de integridad del registro no se sostiene' },
  /** The Idempotency-Key was answered for another route, query or body (docs/user-guide.md "Retries and Idempotency-Key"). */
  CLAVE_IDEMPOTENCIA_REUTILIZADA: { status: 422, message: 'Clave de idempotencia reutilizada con otra petición' },
  TIEMPO_AGOTADO: { status: 408, message: 'Tiempo de espera agotado' },
  PETICION_DEMASIADO_GRANDE: { status: 413, message: 'Petición demasiado grande' },
  /** An import past IMPORT_MAX_ROWS records (docs/user-guide.md "Import (importar)"); `detalles` name the limit. */
  DEMASIADAS_FILAS: { status: 413, message: 'Demasiadas filas' },
  TIPO_CONTENIDO_NO_SOPORTADO: { status: 415, message: 'Tipo de contenido no soportado' },
  DEMASIADAS_PETICIONES: { status: 429, message: 'Demasiadas peticiones' },
  /** A user's open live streams are at EVENT_STREAMS_PER_USER (docs/user-guide.md "Events: the live stream (eventos)"); `detalles` say so. */
  DEMASIADOS_FLUJOS: { status: 429, message: 'Demasiados flujos de eventos abiertos' },
  /** A Range outside the file (docs/user-guide.md "Evidence files"). */
  RANGO_NO_SATISFACIBLE: { status: 416, message: 'Rango no satisfacible' },
  CABECERAS_DEMASIADO_GRANDES: { status: 431, message: 'Cabeceras demasiado grandes' },
  ERROR_INTERNO: { status: 500, message: 'Error interno del servidor' },
  /** A stored evidence file whose bytes are not those its record seals: never served (docs/user-guide.md "Evidence files"). */
  ARCHIVO_ALTERADO: { status: 500, message: 'Archivo alterado: no coincide con su huella' },
  SERVICIO_NO_DISPONIBLE: { status: 503, message: 'Servicio no disponible' },
} as const satisfies Record<string, { status: number; message: string }>

export type ErrorCode = keyof typeof ERRORS

/** An error meant for the client: its code decides status and text. */
export class AppError extends Error {
  readonly code: ErrorCode
  readonly statusCode: number
  readonly detalles?: ErrorDetail[]
  readonly headers?: Record<string, string>

  constructor (code: ErrorCode, detalles?: ErrorDetail[], headers?: Record<string, string>) {
    super(ERRORS[code].message)
    this.name = 'AppError'
    this.code = code
    this.statusCode = ERRORS[code].status
    if (detalles !== undefined && detalles.length > 0) this.detalles = detalles
    if (headers !== undefined) this.headers = headers
  }
}

export function appError (code: ErrorCode, detalles?: ErrorDetail[]): AppError {
  return new AppError(code, detalles)
}

/**
 * 503 of a dependency that is down (docs/user-guide.md "Errors"): names
 * it and why for the log line (never a value of the request), and tells
 * the client when to try again. `label`: its `dependencia` in
 * dependency_unavailable_total (docs/operator-guide.md "Metrics").
 */
export class UnavailableError extends AppError {
  constructor (readonly label: 'archivos' | 'importacion', readonly dependency: string, readonly reason: string, detalles: ErrorDetail[], retryAfterS: number) {
    super('SERVICIO_NO_DISPONIBLE', detalles, { 'retry-after': String(retryAfterS) })
  }
}

/**
 * 500 `Archivo alterado`: a stored evidence file's bytes are not those its
 * record seals (docs/user-guide.md "Evidence files"). `found` says what was
 * read instead (a hash, a size, a tag that fails), for the log line.
 */
export class AlteredFileError extends AppError {
  constructor (readonly found: string) {
    super('ARCHIVO_ALTERADO')
  }
}

/** Shorthand for a single-field 400. */
export function invalid (campo: string, mensaje: string): AppError {
  return new AppError('DATOS_INVALIDOS', [{ campo, mensaje }])
}

export function required (campo: string): AppError {
  return new AppError('DATOS_REQUERIDOS', [{ campo, mensaje: 'es obligatorio' }])
}

/**
 * Raised at start-up when modules.yaml (or the environment) is wrong. It is
 * never sent to a client: the process prints it and exits.
 */
export class ConfigError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'ConfigError'
  }
}

/** Texts of an error's `detalles` that are not a field's validation. */
export const DETAILS = {
  PUNTO_CONTROL_NO_PUBLICADO: 'el almacén de puntos de control (CHECKPOINT_DIR) está lleno o no admite escritura: el punto de control se firmó y se guardó en la base de datos, pero no se publicó; la próxima ronda lo publica sola',
  FLUJOS_ABIERTOS: (max: number) => `ya tiene ${max} flujos de eventos abiertos, el máximo; cierre alguno antes de abrir otro`,
  ARCHIVO_AJENO: 'no es un archivo de este registro: los archivos se añaden subiéndolos (POST …/archivos/{campo})',
  NO_ES_CAMPO_DE_ARCHIVOS: 'no es un campo de archivos de este módulo',
  ARCHIVOS_MAXIMOS: (max: number) => `admite como máximo ${max} archivos`,
  ARCHIVO_VACIO: 'el archivo está vacío',
  TIPO_NO_COINCIDE: (declared: string, sniffed: string) => `el tipo declarado (${declared}) no coincide con el contenido (${sniffed})`,
  TIPO_NO_VALIDO: 'Content-Type no es un tipo de contenido válido',
  CLAVE_IDEMPOTENCIA_NO_VALIDA: 'debe tener de 1 a 255 caracteres ASCII imprimibles',
  DIRECTORIO_MAXIMO: (max: number) => `admite como máximo ${max} ids por consulta`,
  SUPRESION_RECHAZADA: (motivo: string, version: number | undefined) => `${motivo}${version === undefined ? '' : ` (versión ${version})`}; no se ha suprimido nada: avise al responsable de la integridad`,
  ALMACEN_ARCHIVOS_NO_DISPONIBLE: 'el almacén de archivos no está disponible (lleno o inalcanzable); no se guardó ni cambió nada: reintente más tarde',
  IMPORTACION_SIN_ESPACIO: 'el espacio temporal del servidor para importaciones no está disponible (lleno o inaccesible); no se ha escrito nada: reintente más tarde',
} as const

/** Success texts of the interface (exact). */
export const MESSAGES = {
  SESION_CERRADA: 'Sesión cerrada exitosamente',
  REGISTRO_ELIMINADO: 'Registro eliminado exitosamente',
  CONTRASENA_CAMBIADA: 'Contraseña cambiada; las demás sesiones se han cerrado',
  SESIONES_CERRADAS: 'Sesiones del usuario cerradas',
  USUARIO_DESBLOQUEADO: 'Bloqueo de inicio de sesión levantado',
} as const

/**
 * Why `/verificar` found a record not intact (`motivo` beside `valido:
 * false`; docs/operator-guide.md "Integrity"). Never an error: the request succeeded.
 * ILEGIBLE is the one warning beside `valido: true`: the record holds
 * against every checkpoint that could be read.
 */
export const MOTIVOS = {
  VERSION: 'una versión no coincide con su _hash, con la anterior o con su entrada del historial',
  ARCHIVO_FALTA: 'un archivo que la versión sella falta en el almacén de archivos (borrado)',
  ARCHIVO_ALTERADO: 'un archivo del almacén no tiene el SHA-256 (o el tamaño) que la versión sella: alterado o cambiado por otro',
  INDICE_CIEGO: 'un índice ciego no corresponde al valor cifrado del registro',
  RETROCESO: 'faltan en el historial versiones que la cadena global selló (registro revertido)',
  ENTRADA: 'una entrada del historial (autor, fecha, acción, campos o hash) no coincide con su sello en la cadena global',
  FUERA: 'una versión del historial quedó fuera de la cadena global aunque su transacción terminó antes del último sellado (escrita a mano)',
  ENLACE: 'la cadena global no enlaza alrededor de una entrada de este registro',
  TRUNCADA: 'la cadena global es más corta que el último punto de control firmado: se borraron entradas',
  REESCRITA: 'la cadena global no coincide con el último punto de control firmado: se reescribieron entradas',
  FIRMA: 'un punto de control no lleva una firma válida de este servicio',
  ILEGIBLE: 'punto de control ilegible: un fichero del almacén de puntos de control está vacío o incompleto (una avería del almacén, no una manipulación); el registro se verificó con los puntos de control legibles',
} as const

/**
 * The same reasons in English, for operators (logs, `npm run checkpoint`):
 * every text an operator or administrator reads is English, the API's are
 * Spanish.
 */
export const REASONS: Record<keyof typeof MOTIVOS, string> = {
  VERSION: 'a version does not match its _hash, the previous version or its history entry',
  ARCHIVO_FALTA: 'an evidence file a version seals is missing from the file store (deleted)',
  ARCHIVO_ALTERADO: 'an evidence file in the store does not have the SHA-256 (or size) its version seals: altered or swapped',
  INDICE_CIEGO: "a blind index does not match the record's encrypted value",
  RETROCESO: 'versions sealed by the global chain are missing from the history (record rolled back)',
  ENTRADA: 'a history entry (author, time, action, fields or hash) does not match its seal in the global chain',
  FUERA: 'a history version stayed out of the global chain although its transaction ended before the last sealing (written by hand)',
  ENLACE: 'the global chain does not link around an entry of this record',
  TRUNCADA: 'the global chain is shorter than the newest signed checkpoint: entries were deleted',
  REESCRITA: 'the global chain does not match the newest signed checkpoint: entries were rewritten',
  FIRMA: "a checkpoint does not carry a valid signature of this service",
  ILEGIBLE: 'a checkpoint file is empty or incomplete (an outage of the store, not tampering); the record was verified against the readable checkpoints',
}
