import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { AppConfig } from "../AppConfig.js"
import type { AgentProfileStore } from "./AgentProfileStore.js"
import type { ConversationStore } from "./ConversationStore.js"
import { embedded, postgres } from "./Database.js"
import type { IdentityStore } from "./IdentityStore.js"
import type { LlmProfileStore } from "./LlmProfileStore.js"
import { AgentProfileStoreMemory } from "./memory/AgentProfileStoreMemory.js"
import { ConversationStoreMemory } from "./memory/ConversationStoreMemory.js"
import { IdentityStoreMemory } from "./memory/IdentityStoreMemory.js"
import { LlmProfileStoreMemory } from "./memory/LlmProfileStoreMemory.js"
import { MemoryTables } from "./memory/MemoryTables.js"
import { RateLimitStoreMemory } from "./memory/RateLimitStoreMemory.js"
import { SandboxStoreMemory } from "./memory/SandboxStoreMemory.js"
import { SettingsStoreMemory } from "./memory/SettingsStoreMemory.js"
import { StartTaskStoreMemory } from "./memory/StartTaskStoreMemory.js"
import { AgentProfileStorePg } from "./pg/AgentProfileStorePg.js"
import { ConversationStorePg } from "./pg/ConversationStorePg.js"
import { IdentityStorePg } from "./pg/IdentityStorePg.js"
import { LlmProfileStorePg } from "./pg/LlmProfileStorePg.js"
import { MigrationsLive } from "./pg/Migrations.js"
import { RateLimitStorePg } from "./pg/RateLimitStorePg.js"
import { SandboxStorePg } from "./pg/SandboxStorePg.js"
import { SettingsStorePg } from "./pg/SettingsStorePg.js"
import { StartTaskStorePg } from "./pg/StartTaskStorePg.js"
import { storageHealthPg } from "./pg/StorageHealthPg.js"
import type { RateLimitStore } from "./RateLimitStore.js"
import type { SandboxStore } from "./SandboxStore.js"
import type { SettingsStore } from "./SettingsStore.js"
import type { StartTaskStore } from "./StartTaskStore.js"
import { StorageHealth } from "./StorageHealth.js"

/** Every storage port. */
export type Stores =
  | IdentityStore
  | AgentProfileStore
  | LlmProfileStore
  | SettingsStore
  | RateLimitStore
  | SandboxStore
  | ConversationStore
  | StartTaskStore
  | StorageHealth

/** Volatile: nothing persisted (`HANGAR_STORAGE=memory`, and most tests). */
export const MemoryStorage: Layer.Layer<Stores> = Layer.mergeAll(
  IdentityStoreMemory,
  AgentProfileStoreMemory,
  LlmProfileStoreMemory,
  SettingsStoreMemory,
  RateLimitStoreMemory,
  SandboxStoreMemory,
  ConversationStoreMemory,
  StartTaskStoreMemory,
  StorageHealth.memory
).pipe(Layer.provide(MemoryTables.layer))

/**
 * The Postgres implementations over whichever SqlClient is provided, migrations applied first.
 * Embedded mode is a single process, so its rate-limit counters stay in memory.
 */
export const postgresStorage = (backend: "embedded" | "postgres") =>
  Layer.mergeAll(
    IdentityStorePg,
    AgentProfileStorePg,
    LlmProfileStorePg,
    SettingsStorePg,
    backend === "postgres" ? RateLimitStorePg : RateLimitStoreMemory,
    SandboxStorePg,
    ConversationStorePg,
    StartTaskStorePg,
    storageHealthPg(backend)
  ).pipe(Layer.provide(MigrationsLive))

/** Storage as configured: memory, Postgres at `DATABASE_URL`, or the embedded database. */
export const StorageLive = Layer.unwrapEffect(Effect.map(AppConfig, (config) => {
  if (config.storage === "memory") return MemoryStorage
  return Option.match(config.databaseUrl, {
    onNone: () => postgresStorage("embedded").pipe(Layer.provide(embedded(config.dataDir))),
    onSome: (url) => postgresStorage("postgres").pipe(Layer.provide(postgres(url)))
  })
}))
