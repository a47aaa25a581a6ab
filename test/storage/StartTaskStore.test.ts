import { expect, layer } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { StartTaskId } from "../../src/domain/Conversation.js"
import type { OrganizationId } from "../../src/domain/Identity.js"
import type { SandboxId } from "../../src/domain/Sandbox.js"
import { ConversationStore } from "../../src/storage/ConversationStore.js"
import { StartTaskStore } from "../../src/storage/StartTaskStore.js"
import { newConversation, newTask, newUser, today } from "../support/Conversations.js"
import { backends } from "../support/Databases.js"

// One contract, every backend. Each test works for users of its own, so tests share a database.

const created = (outcome: { readonly _tag: string }) => outcome._tag === "Created"

for (const backend of backends) {
  layer(backend.storage, { timeout: "120 seconds" })(`StartTaskStore contract on ${backend.name}`, (it) => {
    it.effect("30 parallel creations against a limit of 10 store exactly 10 tasks and count 10", () =>
      Effect.gen(function*() {
        const store = yield* StartTaskStore
        const owner = newUser()
        const tasks = Array.from({ length: 30 }, () => newTask(owner))
        const results = yield* Effect.all(tasks.map((task) => store.create(task, Option.some(10))), { concurrency: "unbounded" })
        expect(results.filter(created)).toHaveLength(10)
        const refused = results.filter((r) => r._tag === "LimitReached")
        expect(refused).toHaveLength(20)
        for (const r of refused) expect(r).toEqual({ _tag: "LimitReached", used: 10 })
        expect(yield* store.usage(owner, today())).toBe(10)
        const stored = yield* store.search({ userId: owner, after: Option.none(), limit: 100 })
        expect(stored).toHaveLength(10)
        // Refused tasks were not stored.
        for (const [index, result] of results.entries()) {
          expect(Option.isSome(yield* store.find(tasks[index].id))).toBe(created(result))
        }
        // Counted per user and per day.
        expect((yield* store.create(newTask(newUser()), Option.some(10)))._tag).toBe("Created")
        expect((yield* store.create(newTask(owner, { quota_day: "2000-01-01" }), Option.some(10)))._tag).toBe("Created")
        expect(yield* store.usage(owner, "2000-01-01")).toBe(1)
      }))

    it.effect("without a limit every task is stored and counted; a limit of 0 refuses the first", () =>
      Effect.gen(function*() {
        const store = yield* StartTaskStore
        const owner = newUser()
        for (let i = 0; i < 3; i++) expect((yield* store.create(newTask(owner), Option.none()))._tag).toBe("Created")
        expect(yield* store.usage(owner, today())).toBe(3)
        // A lower limit than what is used refuses, reporting the use.
        expect(yield* store.create(newTask(owner), Option.some(2))).toEqual({ _tag: "LimitReached", used: 3 })
        const fresh = newUser()
        expect(yield* store.create(newTask(fresh), Option.some(0))).toEqual({ _tag: "LimitReached", used: 0 })
        expect(yield* store.usage(fresh, today())).toBe(0)
      }))

    it.effect("steps apply to unfinished tasks only; READY comes only after STARTING_CONVERSATION", () =>
      Effect.gen(function*() {
        const store = yield* StartTaskStore
        const conversations = yield* ConversationStore
        const owner = newUser()
        const task = newTask(owner, { updated_at: DateTime.unsafeMake(1_000) })
        yield* store.create(task, Option.none())
        expect(Option.isNone(yield* store.complete(task.id))).toBe(true)
        const waiting = Option.getOrThrow(
          yield* store.advance(task.id, { status: "WAITING_FOR_SANDBOX", sandbox_id: "sb-1" as SandboxId, started_sandbox: true })
        )
        expect(waiting).toMatchObject({ status: "WAITING_FOR_SANDBOX", sandbox_id: "sb-1", started_sandbox: true })
        expect(waiting.updated_at.epochMillis).toBeGreaterThan(1_000)

        const conversation = newConversation(owner, { sandbox_id: "sb-1" as SandboxId })
        const starting = Option.getOrThrow(yield* store.recordConversation(task.id, conversation, "http://agent"))
        expect(starting).toMatchObject({
          status: "STARTING_CONVERSATION",
          app_conversation_id: conversation.id,
          agent_server_url: "http://agent"
        })
        expect(Option.getOrThrow(yield* conversations.find(conversation.id))).toEqual(conversation)
        expect(Option.getOrThrow(yield* store.complete(task.id)).status).toBe("READY")

        // Finished: nothing moves it, nothing is recorded, failing it gives nothing back.
        expect(Option.isNone(yield* store.advance(task.id, { status: "WAITING_FOR_SANDBOX" }))).toBe(true)
        expect(Option.isNone(yield* store.complete(task.id))).toBe(true)
        const late = newConversation(owner)
        expect(Option.isNone(yield* store.recordConversation(task.id, late, "http://agent"))).toBe(true)
        expect(Option.isNone(yield* conversations.find(late.id))).toBe(true)
        expect(Option.isNone(yield* store.fail(task.id, "too late"))).toBe(true)
        expect(yield* store.usage(owner, today())).toBe(1)
        expect(Option.getOrThrow(yield* store.find(task.id))).toMatchObject({ status: "READY", detail: null })
        expect(Option.isNone(yield* store.find("nope" as StartTaskId))).toBe(true)
      }))

    it.effect("failing gives the quota unit back exactly once and removes the conversation the task recorded", () =>
      Effect.gen(function*() {
        const store = yield* StartTaskStore
        const conversations = yield* ConversationStore
        const owner = newUser()
        const [a, b] = [newTask(owner), newTask(owner)]
        yield* store.create(a, Option.some(2))
        yield* store.create(b, Option.some(2))
        const conversation = newConversation(owner, { sandbox_id: "sb" as SandboxId })
        yield* store.recordConversation(a.id, conversation, "http://agent")
        yield* conversations.appendEvents("sb" as SandboxId, conversation.id, [{ kind: "k", event: { kind: "k" } }], Option.none())

        const outcomes = yield* Effect.all(
          Array.from({ length: 5 }, () => store.fail(a.id, "the agent server refused the conversation")),
          { concurrency: "unbounded" }
        )
        expect(outcomes.filter(Option.isSome)).toHaveLength(1)
        expect(Option.getOrThrow(yield* store.find(a.id))).toMatchObject({
          status: "ERROR",
          detail: "the agent server refused the conversation",
          app_conversation_id: null
        })
        expect(yield* store.usage(owner, today())).toBe(1)
        expect(Option.isNone(yield* conversations.find(conversation.id))).toBe(true)
        expect(yield* conversations.listEvents(conversation.id, Option.none(), 10)).toEqual([])
        // The unit given back can be used again.
        expect((yield* store.create(newTask(owner), Option.some(2)))._tag).toBe("Created")
        expect(yield* store.create(newTask(owner), Option.some(2))).toEqual({ _tag: "LimitReached", used: 2 })
        yield* store.fail(b.id, "failed")
        expect(yield* store.usage(owner, today())).toBe(1)
      }))

    it.effect("lists the unfinished tasks of one instance only", () =>
      Effect.gen(function*() {
        const store = yield* StartTaskStore
        const owner = newUser()
        const instance = `instance-${crypto.randomUUID()}`
        const mine = [newTask(owner, { instance_id: instance }), newTask(owner, { instance_id: instance })]
        const done = newTask(owner, { instance_id: instance })
        const failed = newTask(owner, { instance_id: instance })
        const theirs = newTask(owner, { instance_id: `${instance}-other` })
        for (const task of [...mine, done, failed, theirs]) yield* store.create(task, Option.none())
        yield* store.advance(mine[1].id, { status: "WAITING_FOR_SANDBOX" })
        yield* store.recordConversation(done.id, newConversation(owner), "http://agent")
        yield* store.complete(done.id)
        yield* store.fail(failed.id, "x")
        const unfinished = yield* store.listUnfinished(instance)
        expect(unfinished.map((task) => task.id).sort()).toEqual(mine.map((task) => task.id).sort())
      }))

    it.effect("searches one user's tasks newest first, by keyset", () =>
      Effect.gen(function*() {
        const store = yield* StartTaskStore
        const owner = newUser()
        const base = DateTime.unsafeNow().epochMillis
        const tasks = [0, 1, 1, 2, 3].map((offset) => newTask(owner, { created_at: DateTime.unsafeMake(base + offset) }))
        for (const task of tasks) yield* store.create(task, Option.none())
        yield* store.create(newTask(newUser()), Option.none())
        const expected = [...tasks]
          .sort((a, b) => b.created_at.epochMillis - a.created_at.epochMillis || (a.id < b.id ? 1 : -1))
          .map((task) => task.id)
        const seen: Array<string> = []
        let after = Option.none<readonly [number, string]>()
        for (let page = 0; page < 10; page++) {
          const rows = yield* store.search({ userId: owner, after, limit: 2 })
          seen.push(...rows.map((task) => task.id))
          if (rows.length < 2) break
          const last = rows[rows.length - 1]
          after = Option.some([last.created_at.epochMillis, last.id] as const)
        }
        expect(seen).toEqual(expected)
      }))

    it.effect("keeps limit overrides per user and per organisation", () =>
      Effect.gen(function*() {
        const store = yield* StartTaskStore
        const user = newUser()
        const org = `org-${crypto.randomUUID()}` as OrganizationId
        const none = { user: Option.none(), organization: Option.none() }
        expect(yield* store.limitOverrides(user, Option.some(org))).toEqual(none)
        yield* store.setLimitOverride({ _tag: "Organization", id: org }, Option.some(-1))
        yield* store.setLimitOverride({ _tag: "User", id: user }, Option.some(3))
        expect(yield* store.limitOverrides(user, Option.some(org))).toEqual({ user: Option.some(3), organization: Option.some(-1) })
        expect(yield* store.limitOverrides(user, Option.none())).toEqual({ user: Option.some(3), organization: Option.none() })
        expect(yield* store.limitOverrides(newUser(), Option.some(org))).toEqual({ user: Option.none(), organization: Option.some(-1) })
        yield* store.setLimitOverride({ _tag: "User", id: user }, Option.some(5))
        expect((yield* store.limitOverrides(user, Option.none())).user).toEqual(Option.some(5))
        yield* store.setLimitOverride({ _tag: "User", id: user }, Option.none())
        yield* store.setLimitOverride({ _tag: "Organization", id: org }, Option.none())
        expect(yield* store.limitOverrides(user, Option.some(org))).toEqual(none)
      }))
  })
}
