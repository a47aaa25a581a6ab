import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { hashSecret } from "../../src/domain/Secrets.js"
import { SandboxStore } from "../../src/storage/SandboxStore.js"
import { getSandbox, newMember, startSandbox, untilStatus } from "../support/Sandboxes.js"
import { ADMIN_KEY, call, captureLogs, send, testServer } from "../support/TestServer.js"

// The sandbox endpoints on the memory driver: the rules, not the processes (see SandboxProcess.test.ts).

const sandboxFields = ["created_at", "created_by_user_id", "exposed_urls", "id", "sandbox_spec_id", "session_api_key", "status", "updated_at"]

const specs = JSON.stringify([
  { id: "first", command: ["node", "agent.js", "--port", "{port}"] },
  { id: "second", command: ["python", "-m", "agent"], initial_env: { MODE: "test" }, working_dir: "src" }
])

describe("starting and reading sandboxes", () => {
  it.live("starts a sandbox from the default spec: STARTING, then RUNNING with its session key and URLs", () =>
    Effect.gen(function*() {
      const { user_id, api_key } = yield* newMember
      const started = yield* startSandbox(api_key)
      expect(started.status, JSON.stringify(started.body)).toBe(200)
      expect(Object.keys(started.body).sort()).toEqual(sandboxFields)
      expect(started.body).toMatchObject({ created_by_user_id: user_id, sandbox_spec_id: "first" })
      expect(["STARTING", "RUNNING"]).toContain(started.body.status)
      if (started.body.status === "STARTING") {
        expect(started.body.session_api_key).toBeNull()
        expect(started.body.exposed_urls).toBeNull()
      }
      const running = yield* untilStatus(api_key, started.body.id, "RUNNING")
      expect(running.session_api_key).toMatch(/^hss_/)
      expect(running.exposed_urls.map((url: any) => url.name)).toEqual(["AGENT_SERVER", "VSCODE", "WORKER_1", "WORKER_2"])
      for (const url of running.exposed_urls) expect(url.url).toBe(`http://127.0.0.1:${url.port}`)

      // Stored hashed (and sealed), never in clear.
      const stored = Option.getOrThrow(yield* Effect.flatMap(SandboxStore, (store) => store.find(running.id)))
      expect(stored.session_key_hash).toBe(hashSecret(running.session_api_key))
      expect(stored.session_key_sealed).not.toContain(running.session_api_key)
      expect(Option.getOrThrow(yield* Effect.flatMap(SandboxStore, (store) => store.findBySessionKeyHash(stored.session_key_hash))).id)
        .toBe(running.id)

      const explicit = yield* startSandbox(api_key, "second")
      expect(explicit.body.sandbox_spec_id).toBe("second")
      expect(yield* startSandbox(api_key, "nope")).toEqual({ status: 404, body: { detail: "Sandbox spec not found" } })
      expect((yield* startSandbox(api_key, "bad id!")).status).toBe(422)
    }).pipe(Effect.provide(testServer({ HANGAR_SANDBOX_SPECS: specs }))))

  it.live("search lists the caller's sandboxes newest first, filtered by status; batch get keeps request order", () =>
    Effect.gen(function*() {
      const { api_key } = yield* newMember
      const ids: Array<string> = []
      for (let i = 0; i < 3; i++) ids.push((yield* startSandbox(api_key)).body.id)
      for (const id of ids) yield* untilStatus(api_key, id, "RUNNING")
      expect((yield* call("POST", `/api/v1/sandboxes/${ids[1]}/pause`, { token: api_key })).body).toEqual({ success: true })

      const all = yield* call("GET", "/api/v1/sandboxes/search", { token: api_key })
      expect(all.status).toBe(200)
      expect(all.body.items.map((s: any) => s.id)).toEqual([...ids].reverse())
      expect(all.body.next_page_id).toBeNull()
      const paused = yield* call("GET", "/api/v1/sandboxes/search?status=PAUSED", { token: api_key })
      expect(paused.body.items.map((s: any) => [s.id, s.status, s.session_api_key, s.exposed_urls])).toEqual([
        [ids[1], "PAUSED", null, null]
      ])

      const batch = yield* call("GET", `/api/v1/sandboxes?id=${ids[2]}&id=unknown&id=${ids[0]}`, { token: api_key })
      expect(batch.status).toBe(200)
      expect(batch.body.map((s: any) => s?.id ?? null)).toEqual([ids[2], null, ids[0]])
    }).pipe(Effect.provide(testServer())))

  it.live("refuses malformed queries with 422 at the right place", () =>
    Effect.gen(function*() {
      const { api_key } = yield* newMember
      const page = yield* call("GET", "/api/v1/sandboxes/search?page_id=not-a-cursor!", { token: api_key })
      expect(page.status).toBe(422)
      expect(page.body.detail.map((d: any) => d.loc)).toEqual([["query", "page_id"]])
      // A well-formed cursor of another collection is refused too.
      const foreign = Buffer.from(JSON.stringify([3])).toString("base64url")
      expect((yield* call("GET", `/api/v1/sandboxes/search?page_id=${foreign}`, { token: api_key })).body.detail[0].loc)
        .toEqual(["query", "page_id"])
      for (const limit of ["0", "101", "x"]) {
        const response = yield* call("GET", `/api/v1/sandboxes/search?limit=${limit}`, { token: api_key })
        expect(response.status, limit).toBe(422)
        expect(response.body.detail[0].loc).toEqual(["query", "limit"])
      }
      const status = yield* call("GET", "/api/v1/sandboxes/search?status=SLEEPING", { token: api_key })
      expect(status.status).toBe(422)
      expect(status.body.detail[0].loc).toEqual(["query", "status"])
      const many = Array.from({ length: 101 }, (_, i) => `id=${i}`).join("&")
      const batch = yield* call("GET", `/api/v1/sandboxes?${many}`, { token: api_key })
      expect(batch.status).toBe(422)
      expect(batch.body.detail[0]).toMatchObject({ loc: ["query", "id"], type: "too_long" })
      expect((yield* call("GET", `/api/v1/sandboxes?${many.split("&").slice(0, 100).join("&")}`, { token: api_key })).status)
        .toBe(200)
      expect((yield* call("GET", "/api/v1/sandboxes/search")).status).toBe(401)
    }).pipe(Effect.provide(testServer())))
})

describe("ownership", () => {
  it.live("a user cannot see, pause, resume or delete another user's sandbox (404), nor see their session key", () =>
    Effect.gen(function*() {
      const owner = yield* newMember
      const other = yield* newMember
      const id = (yield* startSandbox(owner.api_key)).body.id
      const running = yield* untilStatus(owner.api_key, id, "RUNNING")
      expect(running.session_api_key).toMatch(/^hss_/)

      expect((yield* call("GET", "/api/v1/sandboxes/search", { token: other.api_key })).body.items).toEqual([])
      expect((yield* call("GET", `/api/v1/sandboxes?id=${id}`, { token: other.api_key })).body).toEqual([null])
      for (const [method, path] of [["POST", `/pause`], ["POST", `/resume`], ["DELETE", ""]] as const) {
        expect(yield* call(method, `/api/v1/sandboxes/${id}${path}`, { token: other.api_key })).toEqual({
          status: 404,
          body: { detail: "Sandbox not found" }
        })
      }
      expect((yield* call("GET", `/api/vscode/url?sandbox_id=${id}`, { token: other.api_key })).status).toBe(404)
      const mkdir = yield* call("POST", "/file/create_directory", { token: other.api_key, body: { sandbox_id: id, path: "x" } })
      expect(mkdir.status).toBe(404)
      // The admin of the organisation is another user too.
      expect((yield* call("GET", `/api/v1/sandboxes?id=${id}`, { token: ADMIN_KEY })).body).toEqual([null])
      // Nothing was done to it.
      expect((yield* getSandbox(owner.api_key, id)).status).toBe("RUNNING")
    }).pipe(Effect.provide(testServer())))
})

describe("lifecycle rules", () => {
  it.live("pause, resume and delete are idempotent; a deleted sandbox is gone for good", () =>
    Effect.gen(function*() {
      const { api_key } = yield* newMember
      const id = (yield* startSandbox(api_key)).body.id
      yield* untilStatus(api_key, id, "RUNNING")
      for (let i = 0; i < 2; i++) {
        expect(yield* call("POST", `/api/v1/sandboxes/${id}/pause`, { token: api_key })).toEqual({ status: 200, body: { success: true } })
      }
      expect((yield* getSandbox(api_key, id)).status).toBe("PAUSED")
      for (let i = 0; i < 2; i++) {
        expect((yield* call("POST", `/api/v1/sandboxes/${id}/resume`, { token: api_key })).status).toBe(200)
      }
      yield* untilStatus(api_key, id, "RUNNING")
      for (let i = 0; i < 2; i++) {
        expect(yield* call("DELETE", `/api/v1/sandboxes/${id}`, { token: api_key })).toEqual({ status: 200, body: { success: true } })
      }
      expect(yield* getSandbox(api_key, id)).toBeNull()
      expect((yield* call("POST", `/api/v1/sandboxes/${id}/pause`, { token: api_key })).status).toBe(404)
      expect((yield* call("DELETE", "/api/v1/sandboxes/never-was", { token: api_key })).status).toBe(404)
    }).pipe(Effect.provide(testServer())))

  it.live("the VSCode URL carries the token and the workspace; base_url replaces scheme and host", () =>
    Effect.gen(function*() {
      const { api_key } = yield* newMember
      const id = (yield* startSandbox(api_key)).body.id
      const running = yield* untilStatus(api_key, id, "RUNNING")
      const vscode = running.exposed_urls.find((url: any) => url.name === "VSCODE")
      const plain = yield* call("GET", `/api/vscode/url?sandbox_id=${id}`, { token: api_key })
      expect(plain.status).toBe(200)
      const url = new URL(plain.body.vscode_url)
      expect(`${url.protocol}//${url.host}`).toBe(vscode.url)
      expect(url.searchParams.get("tkn")).toBe(running.session_api_key)
      expect(url.searchParams.get("folder")).toContain(id)
      const based = yield* call("GET", `/api/vscode/url?sandbox_id=${id}&base_url=${encodeURIComponent("https://hangar.example.com/x")}`, {
        token: api_key
      })
      expect(new URL(based.body.vscode_url).host).toBe(`hangar.example.com:${vscode.port}`)
      expect(new URL(based.body.vscode_url).protocol).toBe("https:")
      expect((yield* call("GET", `/api/vscode/url?sandbox_id=${id}&base_url=nope`, { token: api_key })).status).toBe(422)
      yield* call("POST", `/api/v1/sandboxes/${id}/pause`, { token: api_key })
      expect(yield* call("GET", `/api/vscode/url?sandbox_id=${id}`, { token: api_key })).toEqual({
        status: 404,
        body: { detail: "The sandbox has no VSCODE URL" }
      })
    }).pipe(Effect.provide(testServer())))

  const logs = captureLogs()

  it.live("no session key appears in a log line", () =>
    Effect.gen(function*() {
      const { api_key } = yield* newMember
      const id = (yield* startSandbox(api_key)).body.id
      const running = yield* untilStatus(api_key, id, "RUNNING")
      yield* call("POST", `/api/v1/sandboxes/${id}/pause`, { token: api_key })
      yield* call("DELETE", `/api/v1/sandboxes/${id}`, { token: api_key })
      expect(logs.lines.some((line) => line.includes(id))).toBe(true)
      expect(logs.lines.filter((line) => line.includes(running.session_api_key))).toEqual([])
    }).pipe(Effect.provide(testServer({}, undefined, logs.layer))))
})

describe("the concurrency limit", () => {
  it.live("20 parallel starts with a limit of 5: exactly 5 active, 15 refused with 429, the SPEC body and Retry-After", () =>
    Effect.gen(function*() {
      const { api_key } = yield* newMember
      const responses = yield* Effect.all(
        Array.from({ length: 20 }, () =>
          send(HttpClientRequest.post("/api/v1/sandboxes").pipe(HttpClientRequest.setHeader("x-access-token", api_key))).pipe(
            Effect.flatMap((response) =>
              Effect.map(response.json, (body) => ({ status: response.status, headers: response.headers, body: body as any }))
            )
          )),
        { concurrency: "unbounded" }
      )
      const ok = responses.filter((r) => r.status === 200)
      const refused = responses.filter((r) => r.status === 429)
      expect(ok).toHaveLength(5)
      expect(refused).toHaveLength(15)
      for (const r of refused) {
        expect(r.body).toEqual({
          detail: {
            code: "sandbox_limit_reached",
            message: "At most 5 sandboxes may be starting or running at once; pause or delete one first.",
            limit: 5,
            current: 5
          }
        })
        expect(Number(r.headers["retry-after"])).toBeGreaterThan(0)
      }
      const listed = yield* call("GET", "/api/v1/sandboxes/search", { token: api_key })
      expect(listed.body.items).toHaveLength(5)
      for (const s of listed.body.items) expect(["STARTING", "RUNNING"]).toContain(s.status)
      // Another user has a limit of their own.
      const other = yield* newMember
      expect((yield* startSandbox(other.api_key)).status).toBe(200)
    }).pipe(Effect.provide(testServer({ HANGAR_MAX_CONCURRENT_SANDBOXES: "5" }))))

  it.live("resuming counts toward the limit; pausing frees a slot", () =>
    Effect.gen(function*() {
      const { api_key } = yield* newMember
      const first = (yield* startSandbox(api_key)).body.id
      expect((yield* startSandbox(api_key)).status).toBe(429)
      yield* untilStatus(api_key, first, "RUNNING")
      yield* call("POST", `/api/v1/sandboxes/${first}/pause`, { token: api_key })
      const second = (yield* startSandbox(api_key)).body.id
      expect(second).toBeDefined()
      const resume = yield* call("POST", `/api/v1/sandboxes/${first}/resume`, { token: api_key })
      expect(resume.status).toBe(429)
      expect(resume.body.detail).toMatchObject({ code: "sandbox_limit_reached", limit: 1, current: 1 })
      expect((yield* getSandbox(api_key, first)).status).toBe("PAUSED")
      yield* call("DELETE", `/api/v1/sandboxes/${second}`, { token: api_key })
      expect((yield* call("POST", `/api/v1/sandboxes/${first}/resume`, { token: api_key })).status).toBe(200)
      yield* untilStatus(api_key, first, "RUNNING")
    }).pipe(Effect.provide(testServer({ HANGAR_MAX_CONCURRENT_SANDBOXES: "1" }))))

  it.live("pause_oldest pauses the caller's oldest RUNNING sandbox to start a new one", () =>
    Effect.gen(function*() {
      const { api_key } = yield* newMember
      const oldest = (yield* startSandbox(api_key)).body.id
      yield* untilStatus(api_key, oldest, "RUNNING")
      const younger = (yield* startSandbox(api_key)).body.id
      yield* untilStatus(api_key, younger, "RUNNING")
      const third = yield* startSandbox(api_key)
      expect(third.status).toBe(200)
      yield* untilStatus(api_key, oldest, "PAUSED")
      expect((yield* getSandbox(api_key, younger)).status).toBe("RUNNING")
      yield* untilStatus(api_key, third.body.id, "RUNNING")
    }).pipe(Effect.provide(testServer({ HANGAR_MAX_CONCURRENT_SANDBOXES: "2", HANGAR_SANDBOX_LIMIT_POLICY: "pause_oldest" }))))
})

describe("pagination", () => {
  it.live("returns each sandbox exactly once while new ones are being started", () =>
    Effect.gen(function*() {
      const { api_key } = yield* newMember
      const before: Array<string> = []
      for (let i = 0; i < 25; i++) before.push((yield* startSandbox(api_key)).body.id)

      const seen: Array<string> = []
      let starting = true
      const starter = Effect.gen(function*() {
        const started: Array<string> = []
        while (starting) started.push((yield* startSandbox(api_key)).body.id)
        return started
      })
      const pager = Effect.gen(function*() {
        let pageId: string | null = null
        do {
          const query: string = `limit=4${pageId === null ? "" : `&page_id=${pageId}`}`
          const page = yield* call("GET", `/api/v1/sandboxes/search?${query}`, { token: api_key })
          expect(page.status).toBe(200)
          expect(page.body.items.length).toBeLessThanOrEqual(4)
          seen.push(...page.body.items.map((s: any) => s.id))
          pageId = page.body.next_page_id
          yield* Effect.sleep("5 millis")
        } while (pageId !== null)
        starting = false
      })
      const [started] = yield* Effect.all([starter, pager], { concurrency: "unbounded" })
      expect(started.length).toBeGreaterThan(0)
      expect(new Set(seen).size).toBe(seen.length)
      // Every sandbox that existed before paging started is seen, once; the new ones come first or not at all.
      for (const id of before) expect(seen.filter((s) => s === id)).toHaveLength(1)
      expect(seen.every((id) => before.includes(id) || started.includes(id))).toBe(true)
    }).pipe(Effect.provide(testServer({ HANGAR_MAX_CONCURRENT_SANDBOXES: "1000" }))))
})

describe("sandbox specs", () => {
  it.live("are listed (the default first), paginated, and fetched in batch; unknown ids are null", () =>
    Effect.gen(function*() {
      const { api_key } = yield* newMember
      const all = yield* call("GET", "/api/v1/sandbox-specs/search", { token: api_key })
      expect(all.status).toBe(200)
      expect(all.body.items.map((s: any) => s.id)).toEqual(["first", "second"])
      expect(all.body.items[1]).toMatchObject({
        command: ["python", "-m", "agent"],
        initial_env: { MODE: "test" },
        working_dir: "src"
      })
      expect(all.body.items[0]).toMatchObject({ initial_env: {}, working_dir: null })
      const first = yield* call("GET", "/api/v1/sandbox-specs/search?limit=1", { token: api_key })
      expect(first.body.items.map((s: any) => s.id)).toEqual(["first"])
      const second = yield* call("GET", `/api/v1/sandbox-specs/search?limit=1&page_id=${first.body.next_page_id}`, { token: api_key })
      expect(second.body).toMatchObject({ items: [{ id: "second" }], next_page_id: null })
      const batch = yield* call("GET", "/api/v1/sandbox-specs?id=second&id=nope&id=first", { token: api_key })
      expect(batch.body.map((s: any) => s?.id ?? null)).toEqual(["second", null, "first"])
      expect((yield* call("GET", "/api/v1/sandbox-specs/search")).status).toBe(401)
    }).pipe(Effect.provide(testServer({ HANGAR_SANDBOX_SPECS: specs }))))

  it.live("without HANGAR_SANDBOX_SPECS the built-in preset runs the reference agent server", () =>
    Effect.gen(function*() {
      const all = yield* call("GET", "/api/v1/sandbox-specs/search", { token: ADMIN_KEY })
      expect(all.body.items).toHaveLength(1)
      expect(all.body.items[0].id).toBe("reference-agent-server")
      expect(all.body.items[0].command[0]).toBe(process.execPath)
      expect(all.body.items[0].command[1]).toMatch(/dist\/sandbox\/agent-server\/main\.js$/)
    }).pipe(Effect.provide(testServer())))
})
