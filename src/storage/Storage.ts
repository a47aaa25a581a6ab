import { Effect, Layer, Option } from "effect"
import { AppConfig } from "../AppConfig.js"
import { embedded, postgres } from "./Database.js"
import type { IdentityStore } from "./IdentityStore.js"
import { IdentityStoreMemory } from "./memory/IdentityStoreMemory.js"
import { MemoryTables } from "./memory/MemoryTables.js"
import { RateLimitStoreMemory } from "./memory/RateLimitStoreMemory.js"
import { SandboxStoreMemory } from "./memory/SandboxStoreMemory.js"
import { IdentityStorePg } from "./pg/IdentityStorePg.js"
import { MigrationsLive } from "./pg/Migrations.js"
import { RateLimitStorePg } from "./pg/RateLimitStorePg.js"
import { SandboxStorePg } from "./pg/SandboxStorePg.js"
import { storageHealthPg } from "./pg/StorageHealthPg.js"
import type { RateLimitStore } from "./RateLimitStore.js"
import type { SandboxStore } from "./SandboxStore.js"
import { StorageHealth } from "./StorageHealth.js"

/** Every storage port. */
export type Stores = IdentityStore | RateLimitStore | SandboxStore | StorageHealth

/** Volatile: nothing persisted (`HANGAR_STORAGE=memory`, and most tests). */
export const MemoryStorage: Layer.Layer<Stores> = Layer.mergeAll(
  IdentityStoreMemory,
  RateLimitStoreMemory,
  SandboxStoreMemory,
  StorageHealth.memory
).pipe(Layer.provide(MemoryTables.layer))

/**
 * The Postgres implementations over whichever SqlClient is provided, migrations applied first.
 * Embedded mode is a single process, so its rate-limit counters stay in memory.
 */
export const postgresStorage = (backend: "embedded" | "postgres") =>
  Layer.mergeAll(
    IdentityStorePg,
    backend === "postgres" ? RateLimitStorePg : RateLimitStoreMemory,
    SandboxStorePg,
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
