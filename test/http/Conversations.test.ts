import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { ConversationId } from "../../src/domain/Conversation.js"
import type { UserId } from "../../src/domain/Identity.js"
import { SandboxRecord, type SandboxId, type SandboxSpecId } from "../../src/domain/Sandbox.js"
import { instanceIdentity } from "../../src/sandbox/SandboxDriver.js"
import { ConversationStore } from "../../src/storage/ConversationStore.js"
import { SandboxStore } from "../../src/storage/SandboxStore.js"
import { StartTaskStore } from "../../src/storage/StartTaskStore.js"
import { MemoryStorage } from "../../src/storage/Storage.js"
import {
  conversation,
  getTask,
  newConversation,
  newTask,
  quotaStatus,
  startConversation,
  today,
  untilTask
} from "../support/Conversations.js"
import { getSandbox, newMember, startSandbox, untilStatus } from "../support/Sandboxes.js"
import { ADMIN_KEY, call, send, testServer } from "../support/TestServer.js"

// Conversations on the memory driver, whose pretend agent servers take every conversation: the
// rules, not the processes (see ConversationProcesses.test.ts).

const taskFields = ["agent_server_url", "app_conversation_id", "created_at", "detail", "id", "sandbox_id", "status", "updated_at"]

const conversationFields = [
  "agent_profile_id",
  "conversation_url",
  "created_at",
  "created_by_user_id",
  "error",
  "execution_status",
  "git_provider",
  "id",
  "llm_model",
  "parent_conversation_id",
  "public",
  "sandbox_id",
  "sandbox_status",
  "selected_branch",
  "selected_repository",
  "tags",
  "title",
  "trigger",
  "updated_at"
]

const runningSandbox = (token: string) =>
  Effect.gen(function*() {
    const started = yield* startSandbox(token)
    expect(started.status, JSON.stringify(started.body)).toBe(200)
    return yield* untilStatus(token, started.body.id, "RUNNING")
  })

describe("starting a conversation", () => {
  it.live("without sandbox_id: a new sandbox, the task walking to READY, the conversation under the caller's active profile", () =>
    Effect.gen(function*() {
      const { api_key, user_id } = yield* newMember
      const profile = yield* call("POST", `/api/agent-profiles/coder-${crypto.randomUUID().slice(0, 8)}`, { token: ADMIN_KEY, body: {} })
      expect(profile.status).toBe(201)
      expect((yield* call("POST", `/api/agent-profiles/${profile.body.id}/activate`, { token: api_key })).status).toBe(200)

      const request = {
        title: "Fix the build",
        initial_message: "The build is red",
        selected_repository: "acme/widgets",
        selected_branch: "main",
        git_provider: "git_host_a",
        llm_model: "model-x",
        trigger: "gui",
        tags: { team: "core" }
      }
      const started = yield* startConversation(api_key, request)
      expect(started.status, JSON.stringify(started.body)).toBe(200)
      expect(Object.keys(started.body).sort()).toEqual(taskFields)
      expect(started.body).toMatchObject({ status: "WORKING", detail: null, app_conversation_id: null, sandbox_id: null })

      const task = yield* untilTask(api_key, started.body.id, "READY")
      expect(Object.keys(task).sort()).toEqual(taskFields)
      const sandbox = yield* getSandbox(api_key, task.sandbox_id)
      expect(sandbox.status).toBe("RUNNING")
      const agent = sandbox.exposed_urls.find((url: any) => url.name === "AGENT_SERVER").url
      expect(task.agent_server_url).toBe(agent)

      const { initial_message: _, ...recorded } = request
      const found = yield* conversation(api_key, task.app_conversation_id)
      expect(Object.keys(found).sort()).toEqual(conversationFields)
      expect(found).toMatchObject({
        ...recorded,
        id: task.app_conversation_id,
        created_by_user_id: user_id,
        sandbox_id: sandbox.id,
        agent_profile_id: profile.body.id,
        parent_conversation_id: null,
        public: false,
        execution_status: null,
        error: null,
        sandbox_status: "RUNNING",
        conversation_url: `${agent}/api/conversations/${task.app_conversation_id}`
      })

      // A child names its parent; a profile given is recorded as given.
      const other = yield* call("POST", `/api/agent-profiles/other-${crypto.randomUUID().slice(0, 8)}`, { token: ADMIN_KEY, body: {} })
      const child = yield* startConversation(api_key, {
        parent_conversation_id: found.id,
        agent_profile_id: other.body.id,
        sandbox_id: sandbox.id
      })
      const childTask = yield* untilTask(api_key, child.body.id, "READY")
      expect(childTask.sandbox_id).toBe(sandbox.id)
      expect(yield* conversation(api_key, childTask.app_conversation_id)).toMatchObject({
        parent_conversation_id: found.id,
        agent_profile_id: other.body.id,
        title: null,
        tags: {}
      })
      // No more sandboxes than the one.
      expect((yield* call("GET", "/api/v1/sandboxes/search", { token: api_key })).body.items).toHaveLength(1)
    }).pipe(Effect.provide(testServer())))

  it.live("with sandbox_id: the caller's sandbox, resumed when paused; another's is a 404 and reserves nothing", () =>
    Effect.gen(function*() {
      const owner = yield* newMember
      const other = yield* newMember
      const sandbox = yield* runningSandbox(owner.api_key)
      expect((yield* call("POST", `/api/v1/sandboxes/${sandbox.id}/pause`, { token: owner.api_key })).status).toBe(200)
      expect((yield* getSandbox(owner.api_key, sandbox.id)).status).toBe("PAUSED")

      const started = yield* startConversation(owner.api_key, { sandbox_id: sandbox.id })
      const task = yield* untilTask(owner.api_key, started.body.id, "READY")
      expect(task.sandbox_id).toBe(sandbox.id)
      expect((yield* getSandbox(owner.api_key, sandbox.id)).status).toBe("RUNNING")

      for (const id of [sandbox.id, "no-such-sandbox"]) {
        expect(yield* startConversation(other.api_key, { sandbox_id: id })).toEqual({
          status: 404,
          body: { detail: "Sandbox not found" }
        })
      }
      expect((yield* quotaStatus(other.api_key)).used_today).toBe(0)
      expect((yield* call("GET", "/api/v1/app-conversations/start-tasks/search", { token: other.api_key })).body.items)
        .toEqual([])
    }).pipe(Effect.provide(testServer())))

  it.live("refuses unknown references and bad bodies with 422, reserving nothing", () =>
    Effect.gen(function*() {
      const { api_key } = yield* newMember
      const stranger = yield* newMember
      const theirs = yield* startConversation(stranger.api_key, {})
      const theirConversation = (yield* untilTask(stranger.api_key, theirs.body.id, "READY")).app_conversation_id

      const refused = [
        [{ agent_profile_id: "no-such-profile" }, ["body", "agent_profile_id"], "value_error"],
        [{ parent_conversation_id: theirConversation }, ["body", "parent_conversation_id"], "value_error"],
        [{ colour: "blue" }, ["body", "colour"], "extra_forbidden"],
        [{ git_provider: "svn" }, ["body", "git_provider"], "enum"],
        [{ title: "x".repeat(1025) }, ["body", "title"], "string_too_long"],
        [{ title: "nul\u0000byte" }, ["body", "title"], "value_error"],
        [{ tags: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"])) }, ["body", "tags"], "value_error"]
      ] as const
      for (const [body, loc, type] of refused) {
        const response = yield* startConversation(api_key, body)
        expect(response.status, JSON.stringify(body)).toBe(422)
        expect(response.body.detail[0], JSON.stringify(body)).toMatchObject({ loc, type })
      }
      expect((yield* quotaStatus(api_key)).used_today).toBe(0)
      expect((yield* call("GET", "/api/v1/app-conversations/start-tasks/search", { token: api_key })).body.items).toEqual([])
      expect((yield* call("POST", "/api/v1/app-conversations", { body: {} })).status).toBe(401)
    }).pipe(Effect.provide(testServer())))

  it.live("a step that fails ends the task in ERROR with a plain detail, and gives the quota unit back", () =>
    Effect.gen(function*() {
      const { api_key } = yield* newMember
      // The one sandbox the caller may run is taken: the task cannot start another.
      yield* runningSandbox(api_key)
      const started = yield* startConversation(api_key, { title: "no room" })
      expect(started.status).toBe(200)
      const task = yield* untilTask(api_key, started.body.id, "ERROR")
      expect(task.detail).toBe(
        "No sandbox could be started: At most 1 sandboxes may be starting or running at once; pause or delete one first."
      )
      expect(task).toMatchObject({ app_conversation_id: null, sandbox_id: null })
      expect(yield* quotaStatus(api_key)).toMatchObject({ daily_limit: 3, used_today: 0, remaining: 3 })
      expect((yield* call("GET", "/api/v1/app-conversations/count", { token: api_key })).body).toBe(0)
    }).pipe(Effect.provide(testServer({ HANGAR_MAX_CONCURRENT_SANDBOXES: "1", HANGAR_DAILY_CONVERSATION_LIMIT: "3" }))))

  it.live("start tasks are their owner's alone: newest first in pages, batch get in request order", () =>
    Effect.gen(function*() {
      const { api_key } = yield* newMember
      const other = yield* newMember
      const sandbox = yield* runningSandbox(api_key)
      const ids: Array<string> = []
      for (let i = 0; i < 5; i++) ids.push((yield* startConversation(api_key, { sandbox_id: sandbox.id })).body.id)
      const theirs = (yield* startConversation(other.api_key, {})).body.id

      const seen: Array<string> = []
      let pageId: string | null = null
      do {
        const query: string = pageId === null ? "limit=2" : `limit=2&page_id=${pageId}`
        const page = yield* call("GET", `/api/v1/app-conversations/start-tasks/search?${query}`, { token: api_key })
        expect(page.status).toBe(200)
        seen.push(...page.body.items.map((task: any) => task.id))
        pageId = page.body.next_page_id
      } while (pageId !== null)
      expect(seen).toEqual([...ids].reverse())

      const batch = yield* call("GET", `/api/v1/app-conversations/start-tasks?id=${ids[3]}&id=${theirs}&id=nope&id=${ids[0]}`, {
        token: api_key
      })
      expect(batch.body.map((task: any) => task?.id ?? null)).toEqual([ids[3], null, null, ids[0]])
      expect(yield* getTask(other.api_key, ids[0])).toBeNull()
      // A cursor of another collection is refused.
      const foreign = Buffer.from(JSON.stringify([1, "x"])).toString("base64url")
      const refused = yield* call("GET", `/api/v1/app-conversations/start-tasks/search?page_id=${foreign}`, { token: api_key })
      expect(refused.status).toBe(422)
      expect(refused.body.detail[0].loc).toEqual(["query", "page_id"])
    }).pipe(Effect.provide(testServer())))
})

describe("a restarted instance", () => {
  it.live("marks the tasks it left unfinished ERROR, gives their quota back and deletes their sandboxes; other instances' stay", () =>
    Effect.gen(function*() {
      const stores = yield* Layer.build(MemoryStorage)
      const tasks = Context.get(stores, StartTaskStore)
      const dataDir = `/tmp/hangar-restart-${crypto.randomUUID()}`
      const instance = instanceIdentity(dataDir)
      const owner = `user-${crypto.randomUUID()}` as UserId
      const now = DateTime.unsafeNow()
      const sandbox = SandboxRecord.make({
        id: crypto.randomUUID() as SandboxId,
        created_by_user_id: owner,
        sandbox_spec_id: "reference-agent-server" as SandboxSpecId,
        status: "STARTING",
        desired_state: "RUNNING",
        version: 0,
        instance_id: instance,
        session_key_hash: crypto.randomUUID(),
        session_key_sealed: null,
        process: null,
        exposed_urls: null,
        exit_code: null,
        starting_since: now,
        created_at: now,
        updated_at: now,
        deleted_at: null
      })
      yield* Context.get(stores, SandboxStore).insert(sandbox, { max: 5, policy: "reject" })
      const waiting = newTask(owner, {
        instance_id: instance,
        status: "WAITING_FOR_SANDBOX",
        sandbox_id: sandbox.id,
        started_sandbox: true
      })
      const recorded = newConversation(owner, { sandbox_id: sandbox.id })
      const starting = newTask(owner, { instance_id: instance })
      const elsewhere = newTask(owner, { instance_id: `${instance}-other` })
      for (const task of [waiting, starting, elsewhere]) yield* tasks.create(task, Option.none())
      yield* tasks.recordConversation(starting.id, recorded, "http://127.0.0.1:1")
      expect(yield* tasks.usage(owner, today())).toBe(3)

      yield* Effect.provide(Effect.void, testServer({ HANGAR_DATA_DIR: dataDir }, Layer.succeedContext(stores)))

      for (const task of [waiting, starting]) {
        expect(Option.getOrThrow(yield* tasks.find(task.id))).toMatchObject({
          status: "ERROR",
          detail: "Hangar restarted before the conversation was started",
          app_conversation_id: null
        })
      }
      expect(Option.isNone(yield* Context.get(stores, ConversationStore).find(recorded.id))).toBe(true)
      expect(Option.getOrThrow(yield* Context.get(stores, SandboxStore).find(sandbox.id)).desired_state).toBe("DELETED")
      expect(Option.getOrThrow(yield* tasks.find(elsewhere.id)).status).toBe("WORKING")
      expect(yield* tasks.usage(owner, today())).toBe(1)
    }).pipe(Effect.scoped))
})

describe("the daily quota", () => {
  it.live("30 parallel starts against a limit of 10: exactly 10 accepted, 20 refused with 429; an exempt organisation is not limited", () =>
    Effect.gen(function*() {
      const { api_key, org_id, user_id } = yield* newMember
      const sandbox = yield* runningSandbox(api_key)
      const burst = (n: number) =>
        Effect.all(Array.from({ length: n }, () => startConversation(api_key, { sandbox_id: sandbox.id })), {
          concurrency: "unbounded"
        })
      const before = Date.now()
      const responses = yield* burst(30)
      const accepted = responses.filter((r) => r.status === 200)
      const refused = responses.filter((r) => r.status === 429)
      expect(accepted).toHaveLength(10)
      expect(refused).toHaveLength(20)
      const midnight = new Date(before)
      midnight.setUTCHours(24, 0, 0, 0)
      for (const r of refused) {
        expect(r.body).toEqual({
          detail: {
            code: "daily_conversation_limit_reached",
            message: `At most 10 conversations may be started per day; the count starts again at ${midnight.toISOString()}.`,
            limit: 10,
            used: 10,
            reset_at: midnight.toISOString()
          }
        })
      }
      for (const r of accepted) yield* untilTask(api_key, r.body.id, "READY")
      expect(yield* quotaStatus(api_key)).toEqual({
        daily_limit: 10,
        used_today: 10,
        remaining: 0,
        reset_at: midnight.toISOString()
      })
      expect((yield* call("GET", "/api/v1/app-conversations/count", { token: api_key })).body).toBe(10)

      // The organisation exempt: not limited, still counted.
      const store = yield* StartTaskStore
      yield* store.setLimitOverride({ _tag: "Organization", id: org_id }, Option.some(-1))
      expect((yield* burst(15)).map((r) => r.status)).toEqual(Array(15).fill(200))
      expect(yield* quotaStatus(api_key)).toMatchObject({ daily_limit: null, used_today: 25, remaining: null })
      // A user's own override comes first, even over an exemption.
      yield* store.setLimitOverride({ _tag: "User", id: user_id }, Option.some(26))
      expect((yield* burst(3)).map((r) => r.status).sort()).toEqual([200, 429, 429])
      expect(yield* quotaStatus(api_key)).toMatchObject({ daily_limit: 26, used_today: 26, remaining: 0 })
    }).pipe(Effect.provide(testServer({ HANGAR_DAILY_CONVERSATION_LIMIT: "10" }))))

  it.live("429 carries Retry-After: the seconds until the next UTC midnight", () =>
    Effect.gen(function*() {
      const { api_key } = yield* newMember
      const response = yield* send(
        HttpClientRequest.post("/api/v1/app-conversations").pipe(
          HttpClientRequest.setHeader("x-access-token", api_key),
          HttpClientRequest.bodyUnsafeJson({})
        )
      )
      expect(response.status).toBe(429)
      const retryAfter = Number(response.headers["retry-after"])
      const midnight = new Date()
      midnight.setUTCHours(24, 0, 0, 0)
      expect(retryAfter).toBeGreaterThan(0)
      expect(Math.abs(retryAfter - (midnight.getTime() - Date.now()) / 1000)).toBeLessThan(5)
      expect(yield* quotaStatus(api_key)).toMatchObject({ daily_limit: 0, used_today: 0, remaining: 0 })
    }).pipe(Effect.provide(testServer({ HANGAR_DAILY_CONVERSATION_LIMIT: "0" }))))

  it.live("without a limit: unlimited, yet counted", () =>
    Effect.gen(function*() {
      const { api_key } = yield* newMember
      const sandbox = yield* runningSandbox(api_key)
      for (let i = 0; i < 3; i++) expect((yield* startConversation(api_key, { sandbox_id: sandbox.id })).status).toBe(200)
      const status = yield* quotaStatus(api_key)
      expect(status).toMatchObject({ daily_limit: null, used_today: 3, remaining: null })
      expect(status.reset_at).toMatch(/T00:00:00\.000Z$/)
    }).pipe(Effect.provide(testServer())))
})

describe("reading and changing conversations", () => {
  const seed = (userId: UserId, sandboxId: string, count: number) =>
    Effect.gen(function*() {
      const base = DateTime.unsafeNow().epochMillis - 100_000
      const records = Array.from({ length: count }, (_, i) =>
        newConversation(userId, {
          title: i % 4 === 0 ? null : `conversation ${i}`,
          sandbox_id: sandboxId as SandboxId,
          created_at: DateTime.unsafeMake(base + i * 1000),
          updated_at: DateTime.unsafeMake(base + ((i * 7) % count) * 1000)
        })
      )
      yield* (yield* ConversationStore).insertMany(records)
      return records
    })

  it.live("search filters and orders by keyset, count answers a bare integer, a page_id of another order is a 422", () =>
    Effect.gen(function*() {
      const { api_key, user_id } = yield* newMember
      const sandbox = yield* runningSandbox(api_key)
      const records = yield* seed(user_id, sandbox.id, 12)
      yield* seed(`someone-${crypto.randomUUID()}` as UserId, sandbox.id, 3)

      const page1 = yield* call("GET", "/api/v1/app-conversations/search?sort_order=CREATED_AT&limit=5", { token: api_key })
      expect(page1.body.items.map((c: any) => c.id)).toEqual(records.slice(0, 5).map((r) => r.id))
      expect(page1.body.items[0]).toMatchObject({ sandbox_status: "RUNNING", title: null })
      const page2 = yield* call("GET", `/api/v1/app-conversations/search?sort_order=CREATED_AT&limit=5&page_id=${page1.body.next_page_id}`, {
        token: api_key
      })
      expect(page2.body.items.map((c: any) => c.id)).toEqual(records.slice(5, 10).map((r) => r.id))
      const wrongOrder = yield* call("GET", `/api/v1/app-conversations/search?sort_order=TITLE&page_id=${page1.body.next_page_id}`, {
        token: api_key
      })
      expect(wrongOrder.status).toBe(422)
      expect(wrongOrder.body.detail).toEqual([{
        loc: ["query", "page_id"],
        msg: "Value error, this page_id belongs to sort_order CREATED_AT",
        type: "value_error",
        input: page1.body.next_page_id,
        ctx: {}
      }])
      // The default order is UPDATED_AT_DESC, as is GET /api/v1/app-conversations' first page.
      const byUpdate = [...records].sort((a, b) =>
        b.updated_at.epochMillis - a.updated_at.epochMillis || (a.id < b.id ? 1 : -1)
      ).map((r) => r.id)
      expect((yield* call("GET", "/api/v1/app-conversations/search", { token: api_key })).body.items.map((c: any) => c.id))
        .toEqual(byUpdate)
      const first = yield* call("GET", "/api/v1/app-conversations?limit=4", { token: api_key })
      expect(first.body.items.map((c: any) => c.id)).toEqual(byUpdate.slice(0, 4))
      const rest = yield* call("GET", `/api/v1/app-conversations/search?page_id=${first.body.next_page_id}`, { token: api_key })
      expect(rest.body.items.map((c: any) => c.id)).toEqual(byUpdate.slice(4))
      expect(rest.body.next_page_id).toBeNull()

      const since = records[6].created_at.pipe(DateTime.formatIso)
      const filtered = `title__contains=conversation%201&created_at__gte=${since}&sandbox_id__eq=${sandbox.id}`
      const expected = records.filter((r, i) => i >= 6 && r.title?.includes("conversation 1")).map((r) => r.id)
      expect(expected.length).toBeGreaterThan(0)
      expect((yield* call("GET", `/api/v1/app-conversations/search?sort_order=TITLE&${filtered}`, { token: api_key })).body.items
        .map((c: any) => c.id).sort()).toEqual([...expected].sort())
      expect(yield* call("GET", `/api/v1/app-conversations/count?${filtered}`, { token: api_key })).toEqual({
        status: 200,
        body: expected.length
      })
      expect((yield* call("GET", "/api/v1/app-conversations/count", { token: api_key })).body).toBe(12)

      for (const [query, loc] of [
        ["sort_order=NEWEST", ["query", "sort_order"]],
        ["created_at__lt=yesterday", ["query", "created_at__lt"]],
        ["page_id=not-a-cursor!", ["query", "page_id"]],
        ["limit=0", ["query", "limit"]]
      ] as const) {
        const response = yield* call("GET", `/api/v1/app-conversations/search?${query}`, { token: api_key })
        expect(response.status, query).toBe(422)
        expect(response.body.detail[0].loc, query).toEqual(loc)
      }
      expect((yield* call("GET", "/api/v1/app-conversations/count?updated_at__gte=never", { token: api_key })).status).toBe(422)
    }).pipe(Effect.provide(testServer())))

  it.live("batch get keeps request order with null for unknown and others'; PATCH changes what it sends, for the owner only", () =>
    Effect.gen(function*() {
      const { api_key, user_id } = yield* newMember
      const other = yield* newMember
      const [mine] = yield* seed(user_id, "gone-sandbox", 1)
      const [theirs] = yield* seed(other.user_id, "gone-sandbox", 1)
      const batch = yield* call("GET", `/api/v1/app-conversations?id=${theirs.id}&id=${mine.id}&id=nope`, { token: api_key })
      expect(batch.body.map((c: any) => c?.id ?? null)).toEqual([null, mine.id, null])
      // Its sandbox is gone: MISSING, and no URL.
      expect(batch.body[1]).toMatchObject({ sandbox_status: "MISSING", conversation_url: null })
      const tooMany = Array.from({ length: 101 }, (_, i) => `id=${i}`).join("&")
      expect((yield* call("GET", `/api/v1/app-conversations?${tooMany}`, { token: api_key })).status).toBe(422)

      const patch = (id: string, body: unknown, token = api_key) => call("PATCH", `/api/v1/app-conversations/${id}`, { token, body })
      const titled = yield* patch(mine.id, { title: "renamed", tags: { a: "1" } })
      expect(titled.status).toBe(200)
      expect(titled.body).toMatchObject({ id: mine.id, title: "renamed", tags: { a: "1" }, public: false })
      expect(Date.parse(titled.body.updated_at)).toBeGreaterThan(mine.updated_at.epochMillis)
      expect((yield* patch(mine.id, { public: true })).body).toMatchObject({ title: "renamed", tags: { a: "1" }, public: true })
      expect((yield* patch(mine.id, { title: null })).body).toMatchObject({ title: null, public: true })
      expect(yield* patch(theirs.id, { title: "mine now" })).toEqual({ status: 404, body: { detail: "Conversation not found" } })
      expect((yield* conversation(other.api_key, theirs.id)).title).toBe(theirs.title)
      const refused = yield* patch(mine.id, { title: 3, owner: "me" })
      expect(refused.status).toBe(422)
      expect(refused.body.detail.map((d: any) => d.loc).sort()).toEqual([["body", "owner"], ["body", "title"]])
    }).pipe(Effect.provide(testServer())))

  it.live("events are the owner's, in order, in pages", () =>
    Effect.gen(function*() {
      const { api_key, user_id } = yield* newMember
      const other = yield* newMember
      const [record] = yield* seed(user_id, "sandbox-e", 1)
      const store = yield* ConversationStore
      const posted = Array.from({ length: 7 }, (_, i) => ({ kind: "MessageEvent", text: `m${i}` }))
      yield* store.appendEvents("sandbox-e" as SandboxId, record.id, posted.map((event) => ({ kind: event.kind, event })), Option.none())

      const seen: Array<any> = []
      let pageId: string | null = null
      do {
        const query: string = pageId === null ? "limit=3" : `limit=3&page_id=${pageId}`
        const page = yield* call("GET", `/api/v1/app-conversations/${record.id}/events?${query}`, { token: api_key })
        expect(page.status).toBe(200)
        seen.push(...page.body.items)
        pageId = page.body.next_page_id
      } while (pageId !== null)
      expect(seen.map((e) => [e.sequence, e.event])).toEqual(posted.map((event, i) => [i + 1, event]))
      expect(seen.every((e) => typeof e.received_at === "string")).toBe(true)
      expect((yield* call("GET", `/api/v1/app-conversations/${record.id}/events`, { token: other.api_key })).status).toBe(404)
      expect((yield* call("GET", `/api/v1/app-conversations/${"x" as ConversationId}/events`, { token: api_key })).status).toBe(404)
    }).pipe(Effect.provide(testServer())))
})
