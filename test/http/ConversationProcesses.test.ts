import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { existsSync, rmSync } from "node:fs"
import { join } from "node:path"
import { readStat } from "../../src/sandbox/Procfs.js"
import { SandboxStore } from "../../src/storage/SandboxStore.js"
import { StartTaskStore } from "../../src/storage/StartTaskStore.js"
import { MemoryStorage } from "../../src/storage/Storage.js"
import { conversation, getTask, quotaStatus, startConversation, today, untilTask } from "../support/Conversations.js"
import {
  agentUrl,
  eventually,
  fetchWithin,
  getSandbox,
  killSandboxProcesses,
  newMember,
  sandboxProcesses,
  storedProcess,
  tempDataDir,
  withProcesses
} from "../support/Sandboxes.js"
import { call, testServer } from "../support/TestServer.js"

// Conversations on real sandboxes: the process driver runs the reference agent server (compiled
// into dist/ by `npm test`), which Hangar hands conversations to and which posts webhooks back.

const events = (token: string, id: string) =>
  Effect.map(call("GET", `/api/v1/app-conversations/${id}/events`, { token }), ({ body }) => body.items as Array<any>)

describe("a conversation on the reference agent server", () => {
  it.live("starts without sandbox_id: READY, a running sandbox, the conversation held under its key, webhooks applied", () =>
    withProcesses(() =>
      Effect.gen(function*() {
        const { api_key, user_id } = yield* newMember
        const started = yield* startConversation(api_key, {
          title: "end to end",
          initial_message: "hello, agent",
          tags: { suite: "e2e" }
        })
        expect(started.status, JSON.stringify(started.body)).toBe(200)
        expect(started.body).toMatchObject({ status: "WORKING", detail: null, app_conversation_id: null })

        const task = yield* untilTask(api_key, started.body.id, "READY", 30_000)
        const sandbox = yield* getSandbox(api_key, task.sandbox_id)
        expect(sandbox.status).toBe("RUNNING")
        const agent = agentUrl(sandbox)
        expect(task.agent_server_url).toBe(agent)
        const { pid, start_time } = yield* storedProcess(sandbox.id)
        expect(readStat(pid)?.startTime).toBe(start_time)

        // The agent server holds the conversation under Hangar's id, behind the sandbox's session key.
        const id = task.app_conversation_id
        const held = yield* fetchWithin(`${agent}/api/conversations/${id}`, {
          headers: { "x-session-api-key": sandbox.session_api_key }
        })
        expect(held.status).toBe(200)
        expect(JSON.parse(held.body)).toMatchObject({
          id,
          title: "end to end",
          initial_message: "hello, agent",
          sandbox_id: sandbox.id,
          tags: { suite: "e2e" }
        })
        const wrongKey = yield* fetchWithin(`${agent}/api/conversations/${id}`, { headers: { "x-session-api-key": "hss_wrong" } })
        expect(wrongKey.status).toBe(401)

        // Its webhook reported the conversation idle; its first event is the initial message.
        const reported = yield* eventually(conversation(api_key, id), (c) => c?.execution_status === "idle", 10_000, "the webhook")
        expect(reported).toMatchObject({
          id,
          created_by_user_id: user_id,
          sandbox_id: sandbox.id,
          title: "end to end",
          tags: { suite: "e2e" },
          error: null,
          sandbox_status: "RUNNING",
          conversation_url: `${agent}/api/conversations/${id}`
        })
        const first = yield* eventually(events(api_key, id), (items) => items.length === 1, 10_000, "the first event")
        expect(first[0]).toMatchObject({ sequence: 1, event: { kind: "MessageEvent", source: "user", text: "hello, agent" } })

        // The agent server reports a failure of the run: the conversation shows it.
        const error = { kind: "ConversationErrorEvent", code: "AgentStuck", detail: "the agent stopped", classification: "fatal" }
        const posted = yield* fetchWithin(`${agent}/api/conversations/${id}/events`, {
          method: "POST",
          headers: { "x-session-api-key": sandbox.session_api_key },
          body: JSON.stringify([error])
        })
        expect(posted.status).toBe(201)
        const failed = yield* eventually(conversation(api_key, id), (c) => c?.execution_status === "error", 10_000, "the error")
        expect(failed.error).toEqual({ code: "AgentStuck", detail: "the agent stopped", classification: "fatal" })
        const all = yield* events(api_key, id)
        expect(all.map((e) => [e.sequence, e.event.kind])).toEqual([[1, "MessageEvent"], [2, "ConversationErrorEvent"]])
        expect(all[1].event).toMatchObject(error)

        expect((yield* call("DELETE", `/api/v1/sandboxes/${sandbox.id}`, { token: api_key })).status).toBe(200)
        expect((yield* conversation(api_key, id)).sandbox_status).toBe("MISSING")
      })
    ), 60_000)

  it.live("a spec whose command exits at once: the task ends in ERROR, the quota is given back, no process remains", () => {
    const specs = JSON.stringify([{ id: "exits", command: [process.execPath, "-e", "process.exit(3)"] }])
    return withProcesses((dataDir) =>
      Effect.gen(function*() {
        const { api_key } = yield* newMember
        expect(yield* quotaStatus(api_key)).toMatchObject({ daily_limit: 5, used_today: 0, remaining: 5 })
        const started = yield* startConversation(api_key, { title: "doomed" })
        expect(started.status).toBe(200)
        const task = yield* untilTask(api_key, started.body.id, "ERROR", 30_000)
        expect(task.detail).toBe("The sandbox did not start: it is ERROR")
        expect(task.app_conversation_id).toBeNull()
        expect(yield* quotaStatus(api_key)).toMatchObject({ daily_limit: 5, used_today: 0, remaining: 5 })
        expect(yield* sandboxProcesses(dataDir)).toEqual([])
        expect(existsSync(join(dataDir, "sandboxes", task.sandbox_id))).toBe(false)
        expect((yield* call("GET", "/api/v1/sandboxes/search", { token: api_key })).body.items).toEqual([])
        expect((yield* call("GET", "/api/v1/app-conversations/count", { token: api_key })).body).toBe(0)
      }), { HANGAR_SANDBOX_SPECS: specs, HANGAR_DAILY_CONVERSATION_LIMIT: "5" })
  }, 60_000)

  it.live("an agent server that refuses the conversation: ERROR, no conversation kept, its sandbox killed, quota given back", () => {
    const refuses = "require('http').createServer((q, r) => { r.writeHead(q.url === '/alive' ? 200 : 500); r.end('{}') })" +
      ".listen(Number(process.env.PORT), '127.0.0.1')"
    const specs = JSON.stringify([{ id: "refuses", command: [process.execPath, "-e", refuses] }])
    return withProcesses((dataDir) =>
      Effect.gen(function*() {
        const { api_key } = yield* newMember
        const started = yield* startConversation(api_key, { title: "refused" })
        const task = yield* untilTask(api_key, started.body.id, "ERROR", 30_000)
        expect(task.detail).toBe("The agent server refused the conversation (HTTP 500)")
        expect(task.app_conversation_id).toBeNull()
        expect(task.agent_server_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
        // The sandbox ran (it answered /alive) and is gone with everything it started.
        expect(yield* sandboxProcesses(dataDir)).toEqual([])
        expect(existsSync(join(dataDir, "sandboxes", task.sandbox_id))).toBe(false)
        expect((yield* fetchWithin(`${task.agent_server_url}/alive`)).status).toBe(0)
        expect((yield* call("GET", "/api/v1/app-conversations/count", { token: api_key })).body).toBe(0)
        expect(yield* quotaStatus(api_key)).toMatchObject({ daily_limit: null, used_today: 0, remaining: null })
      }), { HANGAR_SANDBOX_SPECS: specs })
  }, 60_000)

  it.live("stopping Hangar fails the tasks it runs: ERROR, quota given back, the sandbox each started deleted", () => {
    const mute = JSON.stringify([{ id: "mute", command: [process.execPath, "-e", "setInterval(() => {}, 1000)"] }])
    const dataDir = tempDataDir()
    return Effect.gen(function*() {
      const stores = yield* Layer.build(MemoryStorage)
      const server = testServer({
        HANGAR_SANDBOX_DRIVER: "process",
        HANGAR_DATA_DIR: dataDir,
        HANGAR_SANDBOX_SPECS: mute,
        HANGAR_SANDBOX_START_TIMEOUT: "600"
      }, Layer.succeedContext(stores))
      const { task, user } = yield* Effect.provide(
        Effect.gen(function*() {
          const { api_key, user_id } = yield* newMember
          const started = yield* startConversation(api_key, { title: "cut short" })
          const waiting = yield* eventually(getTask(api_key, started.body.id), (t) => t?.status === "WAITING_FOR_SANDBOX", 10_000)
          yield* eventually(sandboxProcesses(dataDir), (pids) => pids.length > 0, 10_000, "the sandbox process")
          return { task: waiting, user: user_id }
        }),
        server
      )
      // The server is shut down: its task was interrupted and cleaned up after itself.
      const tasks = Context.get(stores, StartTaskStore)
      expect(Option.getOrThrow(yield* tasks.find(task.id))).toMatchObject({
        status: "ERROR",
        detail: "Hangar stopped before the conversation was started"
      })
      expect(yield* tasks.usage(user, today())).toBe(0)
      expect(Option.getOrThrow(yield* Context.get(stores, SandboxStore).find(task.sandbox_id)).deleted_at).not.toBeNull()
      expect(yield* sandboxProcesses(dataDir)).toEqual([])
    }).pipe(
      Effect.scoped,
      Effect.ensuring(Effect.zipRight(killSandboxProcesses(dataDir), Effect.sync(() => rmSync(dataDir, { recursive: true, force: true }))))
    )
  }, 60_000)
})
