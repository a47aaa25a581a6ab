import * as SqlClient from "@effect/sql/SqlClient"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { RateLimitStore, type RateLimitStoreShape, windowStart } from "../RateLimitStore.js"
import { sqlErrorsAreDefects } from "./Defects.js"

/** Counters shared by every replica: one upsert per request covers all of its windows. */
export const RateLimitStorePg = Layer.effect(
  RateLimitStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return sqlErrorsAreDefects<RateLimitStoreShape>({
      hit: (bucket, windows, now) => {
        const seconds = windows.map((window) => window.seconds)
        const starts = windows.map((window) => new Date(windowStart(window, now)))
        return Effect.map(
          sql<{ window_seconds: number; count: number; expires_at: Date }>`
            INSERT INTO auth_rate_counters AS counter (bucket, window_seconds, window_start, count, expires_at)
            SELECT ${bucket}, w.seconds, w.start, 1, w.start + make_interval(secs => w.seconds)
            FROM unnest(${seconds}::int[], ${starts}::timestamptz[]) AS w (seconds, start)
            ON CONFLICT (bucket, window_seconds, window_start) DO UPDATE SET count = counter.count + 1
            RETURNING window_seconds, count, expires_at`,
          (rows) =>
            windows.map((window) => {
              const row = rows.find((candidate) => candidate.window_seconds === window.seconds)!
              return { window, count: row.count, resetAt: DateTime.unsafeFromDate(row.expires_at) }
            })
        )
      },
      purge: (now) => Effect.asVoid(sql`DELETE FROM auth_rate_counters WHERE expires_at <= ${DateTime.toDateUtc(now)}`)
    })
  })
)
