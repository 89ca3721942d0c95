import { PGlite } from '@electric-sql/pglite'
import { unaccent } from '@electric-sql/pglite/contrib/unaccent'
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm'
const ext = { unaccent, pg_trgm }
let t = performance.now()
const a = await PGlite.create('memory://', { extensions: ext }); await a.query('select 1')
console.log('plain', (performance.now() - t).toFixed(0)); t = performance.now()
const dump = await a.dumpDataDir('none'); console.log('dump', (performance.now() - t).toFixed(0), dump.size); t = performance.now()
const b = await PGlite.create('memory://', { extensions: ext, loadDataDir: dump }); await b.query('select 1')
console.log('from dump', (performance.now() - t).toFixed(0)); t = performance.now()
const c = await PGlite.create('memory://', { extensions: ext }); await c.query('select 1')
console.log('plain again', (performance.now() - t).toFixed(0)); t = performance.now()
const d = await PGlite.create('memory://', { extensions: ext, loadDataDir: dump }); await d.query('select 1')
console.log('from dump again', (performance.now() - t).toFixed(0)); t = performance.now()
