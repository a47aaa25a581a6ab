import { expect, layer } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { UserId } from "../../src/domain/Identity.js"
import type { ConversationId } from "../../src/domain/Conversation.js"
import type { SandboxId } from "../../src/domain/Sandbox.js"
import {
  type ConversationSortKey,
  ConversationStore,
  sortKeyOf
} from "../../src/storage/ConversationStore.js"
import { backends } from "../support/Databases.js"
import {
  expectedIds,
  type Filters,
  newConversation,
  newUser,
  type SortOrder,
  sortOrders,
  storeFilters
} from "../support/Conversations.js"

// One contract, every backend. Each test works for users of its own, so tests share a database.

const noFilters = storeFilters({})

/** Every row of a search, page by page through the store. */
const pageThrough = (userId: UserId, filters: Filters, order: SortOrder, limit: number) =>
  Effect.gen(function*() {
    const store = yield* ConversationStore
    const seen: Array<string> = []
    let after = Option.none<ConversationSortKey>()
    while (true) {
      const rows = yield* store.search({ userId, filters: storeFilters(filters), order, after, limit })
      seen.push(...rows.map((row) => row.id))
      if (rows.length < limit) return seen
      after = Option.some(sortKeyOf(order, rows[rows.length - 1]))
    }
  })

const sandboxA = "sandbox-a" as SandboxId
const sandboxB = "sandbox-b" as SandboxId

for (const backend of backends) {
  layer(backend.storage, { timeout: "120 seconds" })(`ConversationStore contract on ${backend.name}`, (it) => {
    it.effect("stores conversations in bulk and reads them back as they were", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore
        const owner = newUser()
        const full = newConversation(owner, {
          title: "Ünïcode 🚀 title",
          selected_repository: "org/repo",
          selected_branch: "main",
          git_provider: "git_host_a",
          trigger: "gui",
          llm_model: "model-x",
          agent_profile_id: "profile-1" as any,
          parent_conversation_id: "parent-1" as ConversationId,
          tags: { team: "core", "key with space": "välue" },
          public: true,
          execution_status: "error",
          error: { code: "E1", detail: "boom", classification: null },
          event_count: 0
        })
        const bare = newConversation(owner)
        yield* store.insertMany([full, bare])
        expect(Option.getOrThrow(yield* store.find(full.id))).toEqual(full)
        expect(Option.getOrThrow(yield* store.find(bare.id))).toEqual(bare)
        expect(Option.isNone(yield* store.find("nope" as ConversationId))).toBe(true)
        expect(yield* store.count({ userId: owner, filters: noFilters })).toBe(2)
        expect(yield* store.count({ userId: newUser(), filters: noFilters })).toBe(0)
      }))

    it.effect("lets the owner alone patch title, public and tags; what is left out keeps its value", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore
        const owner = newUser()
        const record = newConversation(owner, { title: "before", tags: { a: "1" }, updated_at: DateTime.unsafeMake(1_000) })
        yield* store.insertMany([record])
        expect(Option.isNone(yield* store.update(newUser(), record.id, { title: "stolen" }))).toBe(true)
        expect(Option.getOrThrow(yield* store.update(owner, record.id, {}))).toEqual(record)
        const patched = Option.getOrThrow(yield* store.update(owner, record.id, { public: true, tags: { b: "2" } }))
        expect(patched).toMatchObject({ title: "before", public: true, tags: { b: "2" } })
        expect(patched.updated_at.epochMillis).toBeGreaterThan(1_000)
        const cleared = Option.getOrThrow(yield* store.update(owner, record.id, { title: null }))
        expect(cleared).toMatchObject({ title: null, public: true, tags: { b: "2" } })
        expect(Option.getOrThrow(yield* store.find(record.id))).toEqual(cleared)
        expect(Option.isNone(yield* store.update(owner, "nope" as ConversationId, { public: true }))).toBe(true)
      }))

    it.effect("records an agent server's report on its own sandbox's conversation only", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore
        const record = newConversation(newUser(), { sandbox_id: sandboxA, title: "t" })
        yield* store.insertMany([record])
        expect(yield* store.report(sandboxB, record.id, { execution_status: "running" })).toEqual({ _tag: "OtherSandbox" })
        expect(yield* store.report(sandboxA, "nope" as ConversationId, { execution_status: "running" })).toEqual({ _tag: "NotFound" })
        expect(Option.getOrThrow(yield* store.find(record.id))).toEqual(record)
        const reported = yield* store.report(sandboxA, record.id, { execution_status: "running", title: "named by the agent" })
        expect(reported._tag).toBe("Written")
        expect(Option.getOrThrow(yield* store.find(record.id))).toMatchObject({
          execution_status: "running",
          title: "named by the agent"
        })
      }))

    it.effect("numbers events in order across batches, also when batches race, and pages through them", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore
        const record = newConversation(newUser(), { sandbox_id: sandboxA })
        yield* store.insertMany([record])
        const batch = (tag: string, size: number) =>
          Array.from({ length: size }, (_, i) => ({ kind: "MessageEvent", event: { kind: "MessageEvent", tag, i } }))
        const first = yield* store.appendEvents(sandboxA, record.id, batch("first", 3), Option.none())
        expect(first._tag === "Written" && first.value.map((e) => e.sequence)).toEqual([1, 2, 3])
        const racing = yield* Effect.all(
          Array.from({ length: 8 }, (_, n) => store.appendEvents(sandboxA, record.id, batch(`race-${n}`, 5), Option.none())),
          { concurrency: "unbounded" }
        )
        // Each batch got a contiguous run of numbers; together they cover 4..43 exactly once.
        const runs = racing.map((outcome) => (outcome._tag === "Written" ? outcome.value.map((e) => e.sequence) : []))
        for (const run of runs) expect(run).toEqual(Array.from({ length: 5 }, (_, i) => run[0] + i))
        expect(runs.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 4))

        const all = yield* store.listEvents(record.id, Option.none(), 100)
        expect(all.map((e) => e.sequence)).toEqual(Array.from({ length: 43 }, (_, i) => i + 1))
        expect(all.slice(0, 3).map((e) => e.event)).toEqual(batch("first", 3).map((e) => e.event))
        for (const run of runs) {
          const tag = all.find((e) => e.sequence === run[0])!.event.tag
          expect(all.filter((e) => run.includes(e.sequence)).map((e) => [e.event.tag, e.event.i])).toEqual(
            [0, 1, 2, 3, 4].map((i) => [tag, i])
          )
        }
        expect((yield* store.listEvents(record.id, Option.some(40), 2)).map((e) => e.sequence)).toEqual([41, 42])
        expect(Option.getOrThrow(yield* store.find(record.id)).event_count).toBe(43)
      }))

    it.effect("an error sets execution_status and error; another sandbox or an unknown conversation stores nothing", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore
        const record = newConversation(newUser(), { sandbox_id: sandboxA, execution_status: "running" })
        yield* store.insertMany([record])
        const error = { code: "LLMError", detail: "the model failed", classification: "transient" }
        const events = [{ kind: "ConversationErrorEvent", event: { kind: "ConversationErrorEvent", ...error } }]
        expect(yield* store.appendEvents(sandboxB, record.id, events, Option.some(error))).toEqual({ _tag: "OtherSandbox" })
        expect(yield* store.appendEvents(sandboxA, "nope" as ConversationId, events, Option.some(error))).toEqual({
          _tag: "NotFound"
        })
        expect(yield* store.listEvents(record.id, Option.none(), 100)).toEqual([])
        expect(Option.getOrThrow(yield* store.find(record.id))).toEqual(record)

        expect((yield* store.appendEvents(sandboxA, record.id, events, Option.some(error)))._tag).toBe("Written")
        expect(Option.getOrThrow(yield* store.find(record.id))).toMatchObject({ execution_status: "error", error, event_count: 1 })
        // An empty batch checks the sandbox and changes nothing.
        expect(yield* store.appendEvents(sandboxA, record.id, [], Option.none())).toEqual({ _tag: "Written", value: [] })
        expect(yield* store.appendEvents(sandboxB, record.id, [], Option.none())).toEqual({ _tag: "OtherSandbox" })
      }))

    it.effect("searches in every order and filter, titles by code point, missing titles last, ties by id", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore
        const owner = newUser()
        const base = 1_700_000_000_000
        // Titles chosen where UTF-16 and code point order disagree (U+FF01 vs an emoji), with
        // case, accents, duplicates and missing titles; timestamps with ties.
        const titles = [null, "b", "B", "a", "é", "\uFF01", "😀", "😀", "ab", "a b", null, "", "z", "Z9", null, "b"]
        const records = titles.map((title, i) =>
          newConversation(owner, {
            title,
            sandbox_id: i % 3 === 0 ? sandboxA : sandboxB,
            created_at: DateTime.unsafeMake(base + (i % 5) * 1000),
            updated_at: DateTime.unsafeMake(base + ((i * 7) % 4) * 1000)
          })
        )
        yield* store.insertMany([...records, newConversation(newUser(), { title: "b" })])
        const filterSets: ReadonlyArray<Filters> = [
          {},
          { title__contains: "b" },
          { title__contains: "😀" },
          { title__contains: "" },
          { created_at__gte: base + 1000, created_at__lt: base + 3000 },
          { updated_at__gte: base + 2000 },
          { updated_at__lt: base + 1000 },
          { sandbox_id__eq: sandboxA },
          { title__contains: "a", sandbox_id__eq: sandboxB, created_at__lt: base + 4000 }
        ]
        for (const filters of filterSets) {
          const count = yield* store.count({ userId: owner, filters: storeFilters(filters) })
          expect(count, JSON.stringify(filters)).toBe(expectedIds(records, owner, filters, "CREATED_AT").length)
          for (const order of sortOrders) {
            const expected = expectedIds(records, owner, filters, order)
            for (const limit of [1, 3, 100]) {
              expect(yield* pageThrough(owner, filters, order, limit), `${order} ${JSON.stringify(filters)} by ${limit}`)
                .toEqual(expected)
            }
          }
        }
      }))
  })
}
