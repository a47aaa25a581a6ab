import { expect, layer } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { UserId } from "../../src/domain/Identity.js"
import { type SandboxId, SandboxProcess, SandboxRecord, type SandboxSpecId } from "../../src/domain/Sandbox.js"
import { hashSecret } from "../../src/domain/Secrets.js"
import { SandboxStore } from "../../src/storage/SandboxStore.js"
import { backends } from "../support/Databases.js"

// One contract, every backend. Each test works for users of its own, so tests share a database.

const user = () => `user-${crypto.randomUUID()}` as UserId

const newRecord = (userId: UserId, overrides: Partial<SandboxRecord> = {}) => {
  const now = DateTime.unsafeNow()
  return SandboxRecord.make({
    id: crypto.randomUUID() as SandboxId,
    created_by_user_id: userId,
    sandbox_spec_id: "spec" as SandboxSpecId,
    status: "STARTING",
    desired_state: "RUNNING",
    version: 0,
    instance_id: "instance-a",
    session_key_hash: hashSecret(crypto.randomUUID()),
    session_key_sealed: "sealed",
    process: null,
    exposed_urls: null,
    exit_code: null,
    starting_since: now,
    created_at: now,
    updated_at: now,
    deleted_at: null,
    ...overrides
  })
}

const reject = (max: number) => ({ max, policy: "reject" as const })

for (const backend of backends) {
  layer(backend.storage, { timeout: "120 seconds" })(`SandboxStore contract on ${backend.name}`, (it) => {
    it.effect("inserts, finds and updates by compare-and-set: of two writers on one version, one wins", () =>
      Effect.gen(function*() {
        const store = yield* SandboxStore
        const record = newRecord(user())
        const inserted = yield* store.insert(record, reject(5))
        expect(inserted._tag).toBe("Activated")
        const found = Option.getOrThrow(yield* store.find(record.id))
        expect(found).toEqual(record)

        const process = SandboxProcess.make({ pid: 4242, start_time: "123456" })
        const urls = [{ name: "AGENT_SERVER" as const, url: "http://127.0.0.1:1234", port: 1234 }]
        const [a, b] = yield* Effect.all([
          store.update(record.id, 0, { status: "RUNNING", process, exposed_urls: urls }),
          store.update(record.id, 0, { status: "ERROR", exit_code: 3 })
        ], { concurrency: "unbounded" })
        expect([a, b].filter(Option.isSome)).toHaveLength(1)
        const after = Option.getOrThrow(yield* store.find(record.id))
        expect(after.version).toBe(1)
        expect(DateTime.lessThanOrEqualTo(record.updated_at, after.updated_at)).toBe(true)
        if (Option.isSome(a)) {
          expect(after).toMatchObject({ status: "RUNNING", process, exposed_urls: urls, exit_code: null })
        } else {
          expect(after).toMatchObject({ status: "ERROR", exit_code: 3, process: null })
        }
        // A stale version changes nothing; neither does an unknown id.
        expect(Option.isNone(yield* store.update(record.id, 0, { status: "MISSING" }))).toBe(true)
        expect(Option.isNone(yield* store.update("nope" as SandboxId, 0, { status: "MISSING" }))).toBe(true)
        expect(Option.isNone(yield* store.find("nope" as SandboxId))).toBe(true)
      }))

    it.effect("20 parallel inserts for one user with a limit of 5 activate exactly 5", () =>
      Effect.gen(function*() {
        const store = yield* SandboxStore
        const owner = user()
        const results = yield* Effect.all(
          Array.from({ length: 20 }, () => store.insert(newRecord(owner), reject(5))),
          { concurrency: "unbounded" }
        )
        expect(results.filter((r) => r._tag === "Activated")).toHaveLength(5)
        const refused = results.filter((r) => r._tag === "LimitReached")
        expect(refused).toHaveLength(15)
        for (const r of refused) expect(r).toEqual({ _tag: "LimitReached", current: 5 })
        const stored = yield* store.search({ userId: owner, status: Option.none(), after: Option.none(), limit: 100 })
        expect(stored).toHaveLength(5)
        // Another user is not affected by this one's limit.
        expect((yield* store.insert(newRecord(user()), reject(5)))._tag).toBe("Activated")
      }))

    it.effect("paused, failed and deleted sandboxes do not count; resuming one counts", () =>
      Effect.gen(function*() {
        const store = yield* SandboxStore
        const owner = user()
        const first = newRecord(owner)
        yield* store.insert(first, reject(1))
        expect(yield* store.insert(newRecord(owner), reject(1))).toEqual({ _tag: "LimitReached", current: 1 })
        const paused = Option.getOrThrow(yield* store.update(first.id, 0, { status: "PAUSED", desired_state: "PAUSED" }))
        const second = newRecord(owner)
        expect((yield* store.insert(second, reject(1)))._tag).toBe("Activated")
        for (const patch of [{ status: "ERROR" as const }, { status: "MISSING" as const }, { desired_state: "DELETED" as const }]) {
          // With one active sandbox, a limit of 2 leaves room for exactly one more each time: these do not count.
          expect((yield* store.insert(newRecord(owner, patch), reject(2)))._tag).toBe("Activated")
        }
        // Resuming the paused one would make two active: refused, and the record is unchanged.
        const resume = { status: "STARTING" as const, desired_state: "RUNNING" as const }
        expect(yield* store.activate(first.id, paused.version, resume, reject(1))).toEqual({ _tag: "LimitReached", current: 1 })
        expect(Option.getOrThrow(yield* store.find(first.id)).version).toBe(paused.version)
        // A stale version is a conflict, even where the limit allows.
        expect(yield* store.activate(first.id, paused.version - 1, resume, reject(5))).toEqual({ _tag: "Conflict" })
        const resumed = yield* store.activate(first.id, paused.version, resume, reject(5))
        expect(resumed._tag).toBe("Activated")
        if (resumed._tag === "Activated") expect(resumed.record).toMatchObject({ status: "STARTING", version: paused.version + 1 })
      }))

    it.effect("pause_oldest gives up the oldest RUNNING sandbox, atomically, and only a RUNNING one", () =>
      Effect.gen(function*() {
        const store = yield* SandboxStore
        const owner = user()
        const policy = { max: 2, policy: "pause_oldest" as const }
        const base = DateTime.unsafeNow().epochMillis
        const at = (offset: number) => DateTime.unsafeMake(base + offset)
        const old = newRecord(owner, { status: "RUNNING", created_at: at(-3000) })
        const young = newRecord(owner, { status: "RUNNING", created_at: at(-2000) })
        yield* store.insert(old, policy)
        yield* store.insert(young, policy)
        const third = yield* store.insert(newRecord(owner, { created_at: at(-1000) }), policy)
        expect(third._tag).toBe("Activated")
        if (third._tag !== "Activated") return
        expect(Option.getOrThrow(third.paused)).toMatchObject({ id: old.id, desired_state: "PAUSED", version: 1 })
        // Now one RUNNING (young) and one STARTING: the next start pauses young.
        const fourth = yield* store.insert(newRecord(owner), policy)
        expect(fourth._tag === "Activated" && Option.getOrThrow(fourth.paused).id).toBe(young.id)
        // Two STARTING and nothing RUNNING left to give up: refused.
        expect(yield* store.insert(newRecord(owner), policy)).toEqual({ _tag: "LimitReached", current: 2 })
      }))

    it.effect("searches one user's sandboxes newest first, by keyset, with a status filter", () =>
      Effect.gen(function*() {
        const store = yield* SandboxStore
        const owner = user()
        const base = DateTime.unsafeNow().epochMillis
        // Two share a created_at: the id orders them.
        const records = [0, 1, 1, 2, 3].map((offset, index) =>
          newRecord(owner, {
            created_at: DateTime.unsafeMake(base + offset),
            status: index % 2 === 0 ? "RUNNING" : "PAUSED"
          })
        )
        for (const record of records) yield* store.insert(record, reject(100))
        yield* store.insert(newRecord(user()), reject(100))
        const deleted = newRecord(owner, { desired_state: "DELETED", created_at: DateTime.unsafeMake(base + 1) })
        yield* store.insert(deleted, reject(100))

        const expected = [...records].sort((a, b) =>
          b.created_at.epochMillis - a.created_at.epochMillis || (a.id < b.id ? 1 : -1)
        ).map((r) => r.id)
        const seen: Array<string> = []
        let after = Option.none<readonly [number, string]>()
        for (let page = 0; page < 10; page++) {
          const rows = yield* store.search({ userId: owner, status: Option.none(), after, limit: 2 })
          seen.push(...rows.map((r) => r.id))
          if (rows.length < 2) break
          const last = rows[rows.length - 1]
          after = Option.some([last.created_at.epochMillis, last.id] as const)
        }
        expect(seen).toEqual(expected)
        const running = yield* store.search({ userId: owner, status: Option.some("RUNNING"), after: Option.none(), limit: 100 })
        expect(running.map((r) => r.id)).toEqual(expected.filter((id) => records.find((r) => r.id === id)!.status === "RUNNING"))
      }))

    it.effect("lists an instance's records not yet removed, and finds a sandbox by its session key hash", () =>
      Effect.gen(function*() {
        const store = yield* SandboxStore
        const instance = `instance-${crypto.randomUUID()}`
        const mine = newRecord(user(), { instance_id: instance })
        const removed = newRecord(user(), { instance_id: instance })
        yield* store.insert(mine, reject(5))
        yield* store.insert(removed, reject(5))
        yield* store.insert(newRecord(user()), reject(5))
        yield* store.update(removed.id, 0, { desired_state: "DELETED", deleted_at: DateTime.unsafeNow(), session_key_sealed: null })
        expect((yield* store.listForInstance(instance)).map((r) => r.id)).toEqual([mine.id])

        expect(Option.getOrThrow(yield* store.findBySessionKeyHash(mine.session_key_hash)).id).toBe(mine.id)
        expect(Option.isNone(yield* store.findBySessionKeyHash(removed.session_key_hash))).toBe(true)
        expect(Option.isNone(yield* store.findBySessionKeyHash(hashSecret("hss_unknown")))).toBe(true)
      }))
  })
}
