import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import identity from "./migrations/0001_identity.js"
import profiles from "./migrations/0002_profiles.js"
import sandboxes from "./migrations/0003_sandboxes.js"
import conversations from "./migrations/0004_conversations.js"

/** Every migration, in order. A new one is a new module added here with the next number. */
const migrations = Migrator.fromRecord({
  "1_identity": identity,
  "2_profiles": profiles,
  "3_sandboxes": sandboxes,
  "4_conversations": conversations
})

/** Any fixed number: the advisory lock every replica takes before migrating. */
const MIGRATION_LOCK = 7_243_101

/**
 * Applies pending migrations at start. Several replicas may start at once: each takes the same
 * transaction-scoped advisory lock first, so one migrates while the others wait, then find
 * nothing left to do. Everything runs on the one connection of that transaction (which is also
 * all the embedded database has).
 */
export const MigrationsLive = Layer.effectDiscard(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const applied = yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`
    // The Migrator probes for its table with a query that fails when the table is missing, which
    // would abort this transaction: create it first (its own definition), under the lock.
    yield* sql`
      CREATE TABLE IF NOT EXISTS effect_sql_migrations (
        migration_id integer PRIMARY KEY,
        created_at timestamptz NOT NULL DEFAULT now(),
        name text NOT NULL
      )`
    return yield* Migrator.make({})({ loader: migrations })
  }))
  if (applied.length > 0) {
    yield* Effect.logInfo("applied migrations").pipe(
      Effect.annotateLogs("migrations", applied.map(([id, name]) => `${id}_${name}`))
    )
  }
}).pipe(Effect.orDie))
