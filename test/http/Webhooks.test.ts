import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { ConversationId } from "../../src/domain/Conversation.js"
import { ConversationStore } from "../../src/storage/ConversationStore.js"
import { conversation, startConversation, untilTask } from "../support/Conversations.js"
import { newMember, startSandbox, untilStatus } from "../support/Sandboxes.js"
import { call, testServer } from "../support/TestServer.js"

// The agent servers' webhooks, authenticated by their sandbox's session key (SPEC §9), on the
// memory driver: Hangar is posted to here as the reference agent server posts to it.

/** A member with two running sandboxes and a conversation in each. */
const twoSandboxes = Effect.gen(function*() {
  const { api_key } = yield* newMember
  const sandboxes = []
  for (let i = 0; i < 2; i++) {
    const started = yield* startSandbox(api_key)
    const sandbox = yield* untilStatus(api_key, started.body.id, "RUNNING")
    const task = yield* untilTask(api_key, (yield* startConversation(api_key, { sandbox_id: sandbox.id, title: `c${i}` })).body.id, "READY")
    sandboxes.push({ id: sandbox.id as string, key: sandbox.session_api_key as string, conversation: task.app_conversation_id as string })
  }
  return { token: api_key, a: sandboxes[0], b: sandboxes[1] }
})

const report = (key: string | undefined, body: unknown) =>
  call("POST", "/api/v1/webhooks/conversations", { body, headers: key === undefined ? {} : { "x-session-api-key": key } })

const postEvents = (key: string | undefined, conversationId: string, body: unknown) =>
  call("POST", `/api/v1/webhooks/events/${conversationId}`, {
    body,
    headers: key === undefined ? {} : { "x-session-api-key": key }
  })

const eventsOf = (id: string) =>
  Effect.flatMap(ConversationStore, (store) => store.listEvents(id as ConversationId, Option.none(), 1000))

const storedConversation = (id: string) =>
  Effect.map(Effect.flatMap(ConversationStore, (store) => store.find(id as ConversationId)), Option.getOrThrow)

const errorEvent = { kind: "ConversationErrorEvent", code: "LLMError", detail: "the model failed", classification: "transient" }

describe("webhooks from agent servers", () => {
  it.live("record a conversation's status and title, and its events in order; an error event marks it failed", () =>
    Effect.gen(function*() {
      const { a, token } = yield* twoSandboxes
      // Exactly what the reference agent server sends: the whole conversation, fields Hangar ignores included.
      const sent = {
        id: a.conversation,
        sandbox_id: a.id,
        execution_status: "running",
        title: "Named by the agent",
        initial_message: "hi",
        created_at: "2026-01-01T00:00:00.000Z",
        updated_at: "2026-01-01T00:00:01.000Z"
      }
      expect(yield* report(a.key, sent)).toEqual({ status: 200, body: { success: true } })
      expect(yield* conversation(token, a.conversation)).toMatchObject({ execution_status: "running", title: "Named by the agent" })
      // A null title leaves the title alone.
      expect((yield* report(a.key, { id: a.conversation, execution_status: "finished", title: null })).status).toBe(200)
      expect(yield* conversation(token, a.conversation)).toMatchObject({ execution_status: "finished", title: "Named by the agent" })

      const first = [{ kind: "MessageEvent", id: "e1", text: "one" }, { kind: "ActionEvent", id: "e2", tool: "bash" }]
      expect(yield* postEvents(a.key, a.conversation, first)).toEqual({ status: 200, body: { success: true } })
      expect((yield* postEvents(a.key, a.conversation, [errorEvent, { kind: "MessageEvent", id: "e4" }])).status).toBe(200)
      const stored = yield* eventsOf(a.conversation)
      expect(stored.map((e) => [e.sequence, e.kind, e.event])).toEqual([
        [1, "MessageEvent", first[0]],
        [2, "ActionEvent", first[1]],
        [3, "ConversationErrorEvent", errorEvent],
        [4, "MessageEvent", { kind: "MessageEvent", id: "e4" }]
      ])
      expect(yield* conversation(token, a.conversation)).toMatchObject({
        execution_status: "error",
        error: { code: "LLMError", detail: "the model failed", classification: "transient" }
      })
      // Without a classification, the error has none.
      yield* postEvents(a.key, a.conversation, [{ kind: "ConversationErrorEvent", code: "Crash", detail: "gone" }])
      expect((yield* conversation(token, a.conversation)).error).toEqual({ code: "Crash", detail: "gone", classification: null })
      expect((yield* call("GET", `/api/v1/app-conversations/${a.conversation}/events`, { token })).body.items).toHaveLength(5)
    }).pipe(Effect.provide(testServer())))

  it.live("a missing or unknown session key is a 401, and nothing is stored", () =>
    Effect.gen(function*() {
      const { a } = yield* twoSandboxes
      const before = yield* storedConversation(a.conversation)
      const apiKey = (yield* newMember).api_key
      for (const key of [undefined, "", "hss_unknown", `${a.key}x`, apiKey]) {
        expect(yield* report(key, { id: a.conversation, execution_status: "running" }), String(key)).toEqual({
          status: 401,
          body: { detail: "Missing or unknown X-Session-API-Key" }
        })
        expect((yield* postEvents(key, a.conversation, [errorEvent])).status, String(key)).toBe(401)
      }
      // An API key is no session key, whichever header carries it.
      expect((yield* call("POST", "/api/v1/webhooks/conversations", {
        token: apiKey,
        body: { id: a.conversation, execution_status: "running" }
      })).status).toBe(401)
      expect(yield* storedConversation(a.conversation)).toEqual(before)
      expect(yield* eventsOf(a.conversation)).toEqual([])
    }).pipe(Effect.provide(testServer())))

  it.live("another sandbox's conversation is a 403 and an unknown one a 404, and nothing is stored", () =>
    Effect.gen(function*() {
      const { a, b } = yield* twoSandboxes
      const before = yield* storedConversation(b.conversation)
      expect(yield* report(a.key, { id: b.conversation, execution_status: "running", title: "hijacked" })).toEqual({
        status: 403,
        body: { detail: "The conversation belongs to another sandbox" }
      })
      expect(yield* postEvents(a.key, b.conversation, [errorEvent])).toEqual({
        status: 403,
        body: { detail: "The conversation belongs to another sandbox" }
      })
      expect(yield* storedConversation(b.conversation)).toEqual(before)
      expect(yield* eventsOf(b.conversation)).toEqual([])
      expect(yield* report(a.key, { id: "never-started", execution_status: "running" })).toEqual({
        status: 404,
        body: { detail: "Conversation not found" }
      })
      expect((yield* postEvents(a.key, "never-started", [errorEvent])).status).toBe(404)
    }).pipe(Effect.provide(testServer())))

  it.live("malformed payloads are 422s, a whole batch refused for one bad event", () =>
    Effect.gen(function*() {
      const { a } = yield* twoSandboxes
      const refusals = [
        [report(a.key, { execution_status: "running" }), ["body", "id"]],
        [report(a.key, { id: a.conversation, execution_status: "sleeping" }), ["body", "execution_status"]],
        [postEvents(a.key, a.conversation, { kind: "MessageEvent" }), ["body"]],
        [postEvents(a.key, a.conversation, [{ kind: "MessageEvent" }, { text: "no kind" }]), ["body", "1", "kind"]],
        [postEvents(a.key, a.conversation, [{ kind: "MessageEvent" }, { kind: "ConversationErrorEvent", code: "E" }]), ["body", "1"]],
        [postEvents(a.key, a.conversation, Array.from({ length: 1001 }, () => ({ kind: "k" }))), ["body"]]
      ] as const
      for (const [request, loc] of refusals) {
        const response = yield* request
        expect(response.status, JSON.stringify(loc)).toBe(422)
        expect(response.body.detail[0].loc).toEqual(loc)
      }
      expect(yield* eventsOf(a.conversation)).toEqual([])
      expect((yield* storedConversation(a.conversation)).execution_status).toBeNull()
    }).pipe(Effect.provide(testServer())))
})
