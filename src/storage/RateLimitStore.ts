import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import type * as Effect from "effect/Effect"

/** A fixed window: at most `limit` hits per `seconds`, counted from the window's start. */
export interface RateWindow {
  readonly limit: number
  readonly seconds: number
}

export interface WindowCount {
  readonly window: RateWindow
  /** Hits in the current window, this one included. */
  readonly count: number
  /** When the current window ends. */
  readonly resetAt: DateTime.Utc
}

/**
 * Counters for the authentication rate limiter. In Postgres mode they live in Postgres so that
 * every replica counts against the same windows.
 */
export interface RateLimitStoreShape {
  /** Counts one hit for `bucket` in each window and returns the counts after it. */
  readonly hit: (bucket: string, windows: ReadonlyArray<RateWindow>, now: DateTime.Utc) => Effect.Effect<ReadonlyArray<WindowCount>>
  /** Forgets windows that have ended. */
  readonly purge: (now: DateTime.Utc) => Effect.Effect<void>
}

export class RateLimitStore extends Context.Tag("hangar/RateLimitStore")<RateLimitStore, RateLimitStoreShape>() {}

export const windowStart = (window: RateWindow, now: DateTime.Utc): number => {
  const size = window.seconds * 1000
  return Math.floor(now.epochMillis / size) * size
}
