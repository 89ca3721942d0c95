/** The service's own tables, registered with the ORM beside the module entities. */
import { DecisionEntity, DueEntity, ReviewRunEntity } from './data-protection-entities.js'
import { HistoryEntity } from './history-entity.js'
import { CheckpointEntity, ChainEntryEntity, ChainStateEntity } from './global-chain-entity.js'
import { ReadLogEntity } from './read-log-entity.js'
import { StateEntity } from './revocation-epoch.js'
import { SessionEntity } from './session-entity.js'
import { SystemKeyEntity } from './system-keys.js'
import { DeliveryEntity, SubscriptionStateEntity } from './subscription-entities.js'

export const SYSTEM_ENTITIES = [SessionEntity, SystemKeyEntity, HistoryEntity, ReadLogEntity, StateEntity, ChainEntryEntity, ChainStateEntity, CheckpointEntity, SubscriptionStateEntity, DeliveryEntity, DecisionEntity, DueEntity, ReviewRunEntity] as const
