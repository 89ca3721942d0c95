/**
 * Which operations a module's route plugin registers (docs/architecture.md
 * "Adding an operation to every module"): those every module has, in the
 * order they are registered and documented, then the module's own, by the
 * role the registry gives it.
 */
import type { ModuleDef, Registry } from '../../core/registry/types.js'
import type { Operation } from './operation.js'
import { list } from './list.js'
import { summary } from './summary.js'
import { get } from './get.js'
import { create } from './create.js'
import { update } from './update.js'
import { remove } from './remove.js'
import { restore } from './restore.js'
import { history } from './history.js'
import { verify } from './verify.js'
import { printRecord } from './document.js'
import { exportRecords } from './export.js'
import { importRecords } from './import.js'
import { uploadFile } from './upload-file.js'
import { downloadFile } from './download-file.js'
import { fileCustody } from './file-custody.js'
import { endSessions } from './users/end-sessions.js'
import { unlock } from './users/unlock.js'
import { getUser } from './users/get-user.js'
import { createSubscription } from './subscriptions/create.js'
import { subscriptionDeliveries } from './subscriptions/deliveries.js'
import { resumeSubscription } from './subscriptions/resume.js'
import { replaySubscription } from './subscriptions/replay.js'

export const EVERY_MODULE: readonly Operation[] = [list, summary, get, create, update, remove, restore, history, verify, printRecord, exportRecords, importRecords]

/** The users module's own operations: a user's sessions and lock-out. */
const USERS: readonly Operation[] = [endSessions, unlock]

/** The subscriptions module's own operations: a subscription's deliveries, resume and replay. */
const SUBSCRIPTIONS: readonly Operation[] = [subscriptionDeliveries, resumeSubscription, replaySubscription]

/**
 * The operations every module has, as `mod` has them: the subscriptions
 * module's create shows a generated secret once; the users module's get
 * answers the user's lock-out too.
 */
export function commonOperations (mod: ModuleDef): readonly Operation[] {
  if (mod.subscriptions) return EVERY_MODULE.map((op) => op === create ? createSubscription : op)
  return mod.users ? EVERY_MODULE.map((op) => op === get ? getUser : op) : EVERY_MODULE
}

/** A module with file fields: upload, download and custody (docs/user-guide.md "Evidence files"). */
const FILES: readonly Operation[] = [uploadFile, downloadFile, fileCustody]

/** The operations only `mod` has. */
export function ownOperations (mod: ModuleDef, registry: Registry): readonly Operation[] {
  const files = mod.fields.some((f) => f.type === 'file') ? FILES : []
  if (mod.name === registry.usersModule.name) return [...USERS, ...files]
  return mod.subscriptions ? [...SUBSCRIPTIONS, ...files] : files
}
