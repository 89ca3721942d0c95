/** A related record (docs/user-guide.md "Console"): its name as its module names records, a link to its screen. */
import { useEffect, useState } from 'preact/hooks'
import { request } from './api.js'
import { nameFields, nameOf, type ModuleInfo } from './modules.js'
import { href } from './route.js'

export function RefLink ({ target, id }: { target: ModuleInfo, id: string }) {
  const [name, setName] = useState<string>()
  useEffect(() => {
    const campos = nameFields(target).join(',')
    let live = true
    // Only the naming fields: nothing encrypted is read, so no read-log entry for a name.
    request<{ data: Record<string, unknown> }>('GET', `/${target.ruta}/${encodeURIComponent(id)}${campos === '' ? '' : `?campos=${campos}`}`)
      .then((res) => { if (live) setName(nameOf(target, res.data)) }, () => undefined)
    return () => { live = false }
  }, [target.ruta, id])
  return <a href={href([target.ruta, id])}>{name === undefined || name === id ? id : `${name} (${id})`}</a>
}
