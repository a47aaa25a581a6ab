import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
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
