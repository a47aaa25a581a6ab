import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { StorageHealth } from "../StorageHealth.js"

/** Ready when the database answers a trivial query within two seconds. */
export const storageHealthPg = (backend: "embedded" | "postgres") =>
  Layer.effect(
    StorageHealth,
    Effect.map(SqlClient.SqlClient, (sql) => ({
      backend,
      check: sql`SELECT 1`.pipe(
        Effect.timeout("2 seconds"),
        Effect.mapError(() => "the database does not answer"),
        Effect.asVoid
      )
    }))
  )
