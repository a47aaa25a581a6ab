import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { RateLimitStore, windowStart } from "../RateLimitStore.js"

/** Counters in this process: right for one process (memory and embedded modes). */
export const RateLimitStoreMemory = Layer.sync(RateLimitStore, () => {
  const counters = new Map<string, { count: number; endsAt: number }>()
  return {
    hit: (bucket, windows, now) =>
      Effect.sync(() =>
        windows.map((window) => {
          const start = windowStart(window, now)
          const key = `${bucket}\u0000${window.seconds}\u0000${start}`
          const counter = counters.get(key) ?? { count: 0, endsAt: start + window.seconds * 1000 }
          counter.count += 1
          counters.set(key, counter)
          return { window, count: counter.count, resetAt: DateTime.unsafeMake(counter.endsAt) }
        })
      ),
    purge: (now) =>
      Effect.sync(() => {
        for (const [key, counter] of counters) if (counter.endsAt <= now.epochMillis) counters.delete(key)
      })
  }
})
