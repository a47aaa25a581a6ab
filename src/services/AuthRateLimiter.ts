import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { RateLimited, RateLimitDetail } from "../api/Errors.js"
import { AppConfig } from "../AppConfig.js"
import type { ApiKeyId } from "../domain/Identity.js"
import { RateLimitStore, type WindowCount } from "../storage/RateLimitStore.js"

/**
 * The authentication rate limiter (SPEC §3): each request made with a key counts against that
 * key's windows; each failed attempt counts against the client's IP, and an IP over its limit
 * is refused before any key is looked at, until its window ends. Off when no window is set.
 */
export interface AuthRateLimiterShape {
  /** Fails while the client IP is over its failed-attempt limit. */
  readonly checkClient: (ip: string) => Effect.Effect<void, RateLimited>
  /** Counts a failed attempt; fails when it puts the client over the limit. */
  readonly countFailure: (ip: string) => Effect.Effect<void, RateLimited>
  /** Counts a request made with the key; fails over the limit. */
  readonly countKey: (id: ApiKeyId) => Effect.Effect<void, RateLimited>
}

export class AuthRateLimiter extends Context.Tag("hangar/AuthRateLimiter")<AuthRateLimiter, AuthRateLimiterShape>() {}

const off: AuthRateLimiterShape = { checkClient: () => Effect.void, countFailure: () => Effect.void, countKey: () => Effect.void }

export const rateLimited = (exceeded: WindowCount, now: DateTime.Utc): RateLimited => {
  const retryAfter = Math.max(1, Math.ceil((exceeded.resetAt.epochMillis - now.epochMillis) / 1000))
  return new RateLimited({
    detail: RateLimitDetail.make({
      code: "rate_limited",
      message: `Too many requests: at most ${exceeded.window.limit} per ${exceeded.window.seconds} s. Retry in ${retryAfter} s.`,
      limit: exceeded.window.limit,
      window_seconds: exceeded.window.seconds,
      retry_after: retryAfter
    })
  })
}

export const AuthRateLimiterLive = Layer.scoped(
  AuthRateLimiter,
  Effect.gen(function*() {
    const { authRateLimit: windows } = yield* AppConfig
    if (windows.length === 0) return off
    const store = yield* RateLimitStore
    // Clients known to be over their failure limit, until when: checked without a round trip.
    const blocked = new Map<string, WindowCount>()

    yield* Effect.forkScoped(Effect.repeat(
      Effect.flatMap(DateTime.now, (now) => {
        for (const [ip, until] of blocked) if (until.resetAt.epochMillis <= now.epochMillis) blocked.delete(ip)
        return store.purge(now)
      }),
      Schedule.spaced("1 minute")
    ))

    const count = (bucket: string) =>
      Effect.gen(function*() {
        const now = yield* DateTime.now
        const counts = yield* store.hit(bucket, windows, now)
        const exceeded = counts.find((c) => c.count > c.window.limit)
        return { now, exceeded }
      })

    return {
      checkClient: (ip) =>
        Effect.flatMap(DateTime.now, (now) => {
          const until = blocked.get(ip)
          return until && until.resetAt.epochMillis > now.epochMillis ? Effect.fail(rateLimited(until, now)) : Effect.void
        }),
      countFailure: (ip) =>
        Effect.flatMap(count(`ip:${ip}`), ({ exceeded, now }) => {
          if (!exceeded) return Effect.void
          blocked.set(ip, exceeded)
          return Effect.fail(rateLimited(exceeded, now))
        }),
      countKey: (id) =>
        Effect.flatMap(count(`key:${id}`), ({ exceeded, now }) => exceeded ? Effect.fail(rateLimited(exceeded, now)) : Effect.void)
    }
  })
)
