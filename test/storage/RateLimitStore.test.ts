import { expect, layer } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { RateLimitStore } from "../../src/storage/RateLimitStore.js"
import { backends } from "../support/Databases.js"

const second = { limit: 3, seconds: 1 }
const minute = { limit: 10, seconds: 60 }
const at = (iso: string) => DateTime.unsafeMake(iso)

for (const backend of backends) {
  layer(backend.storage, { timeout: "120 seconds" })(`RateLimitStore contract on ${backend.name}`, (it) => {
    it.effect("counts hits per bucket in fixed windows, each with its end", () =>
      Effect.gen(function*() {
        const store = yield* RateLimitStore
        const bucket = `key:${crypto.randomUUID()}`
        const t0 = at("2030-01-01T00:00:00.100Z")
        const first = yield* store.hit(bucket, [second, minute], t0)
        expect(first.map((c) => c.count)).toEqual([1, 1])
        expect(first.map((c) => DateTime.formatIso(c.resetAt))).toEqual([
          "2030-01-01T00:00:01.000Z",
          "2030-01-01T00:01:00.000Z"
        ])
        yield* store.hit(bucket, [second, minute], at("2030-01-01T00:00:00.500Z"))
        const third = yield* store.hit(bucket, [second, minute], at("2030-01-01T00:00:00.900Z"))
        expect(third.map((c) => c.count)).toEqual([3, 3])
        // The next second is a new window for the per-second limit only.
        const next = yield* store.hit(bucket, [second, minute], at("2030-01-01T00:00:01.000Z"))
        expect(next.map((c) => c.count)).toEqual([1, 4])
        // Another bucket counts on its own.
        const other = yield* store.hit(`${bucket}-other`, [second, minute], t0)
        expect(other.map((c) => c.count)).toEqual([1, 1])
      }))

    it.effect("counts concurrent hits exactly", () =>
      Effect.gen(function*() {
        const store = yield* RateLimitStore
        const bucket = `ip:${crypto.randomUUID()}`
        const now = at("2030-01-01T00:05:00.000Z")
        const counts = yield* Effect.all(
          Array.from({ length: 25 }, () => Effect.map(store.hit(bucket, [minute], now), ([c]) => c.count)),
          { concurrency: "unbounded" }
        )
        expect([...counts].sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1))
      }))

    it.effect("purges ended windows", () =>
      Effect.gen(function*() {
        const store = yield* RateLimitStore
        const bucket = `key:${crypto.randomUUID()}`
        yield* store.hit(bucket, [minute], at("2030-01-01T01:00:00.000Z"))
        yield* store.hit(bucket, [minute], at("2030-01-01T01:00:30.000Z"))
        yield* store.purge(at("2030-01-01T01:01:00.000Z"))
        const [after] = yield* store.hit(bucket, [minute], at("2030-01-01T01:00:59.000Z"))
        expect(after.count).toBe(1)
      }))
  })
}
