import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { groupMembers, readStat } from "../../src/sandbox/Procfs.js"
import {
  agentUrl,
  eventually,
  fetchWithin,
  getSandbox,
  newMember,
  startSandbox,
  storedProcess,
  untilStatus,
  withProcesses
} from "../support/Sandboxes.js"
import { call } from "../support/TestServer.js"

// Real sandboxes: the process driver runs the reference agent server (compiled into dist/ by
// `npm test`) as process groups. Every test kills whatever its Hangar started, even on failure.

describe("the process driver", () => {
  it.live("runs a sandbox as a process group: STARTING → RUNNING, reachable with its key, paused, resumed, deleted", () =>
    withProcesses((dataDir) =>
      Effect.gen(function*() {
        const { api_key } = yield* newMember
        const started = yield* startSandbox(api_key)
        expect(started.status, JSON.stringify(started.body)).toBe(200)
        expect(started.body.status).toBe("STARTING")
        const id = started.body.id
        const running = yield* untilStatus(api_key, id, "RUNNING")
        const url = agentUrl(running)
        const key = running.session_api_key

        // The agent server answers at the exposed URL, with the session key and only with it.
        expect((yield* fetchWithin(`${url}/alive`)).status).toBe(200)
        expect(JSON.parse((yield* fetchWithin(`${url}/health`)).body)).toMatchObject({ status: "healthy", sandbox_id: id })
        const conversation = { method: "POST", body: JSON.stringify({ title: "hello" }) }
        const accepted = yield* fetchWithin(`${url}/api/conversations`, { ...conversation, headers: { "x-session-api-key": key } })
        expect(accepted.status).toBe(201)
        expect(JSON.parse(accepted.body)).toMatchObject({ title: "hello", sandbox_id: id })
        expect((yield* fetchWithin(`${url}/api/conversations`, conversation)).status).toBe(401)
        expect((yield* fetchWithin(`${url}/api/conversations`, { ...conversation, headers: { "x-session-api-key": `${key}x` } })).status)
          .toBe(401)

        const { pid, start_time } = yield* storedProcess(id)
        const stat = readStat(pid)!
        expect(stat.pgrp).toBe(pid)
        expect(stat.startTime).toBe(start_time)
        const sandboxDir = join(dataDir, "sandboxes", id)
        expect(statSync(join(sandboxDir, "workspace")).isDirectory()).toBe(true)
        expect(readFileSync(join(sandboxDir, "sandbox.log"), "utf8")).toContain("agent server listening")

        // Pause: every process of the group stopped, the URL no longer answering.
        expect((yield* call("POST", `/api/v1/sandboxes/${id}/pause`, { token: api_key })).body).toEqual({ success: true })
        const paused = yield* getSandbox(api_key, id)
        expect(paused).toMatchObject({ status: "PAUSED", session_api_key: null, exposed_urls: null })
        const members = yield* eventually(
          Effect.sync(() => groupMembers(pid)),
          (members) => members.length > 0 && members.every((member) => member.state === "T"),
          5000,
          "every process of the group to be stopped"
        )
        expect(members.map((member) => member.pid)).toContain(pid)
        expect((yield* fetchWithin(`${url}/alive`, {}, 500)).status).toBe(0)

        // Resume: answering again.
        expect((yield* call("POST", `/api/v1/sandboxes/${id}/resume`, { token: api_key })).body).toEqual({ success: true })
        const resumed = yield* untilStatus(api_key, id, "RUNNING")
        expect(resumed.session_api_key).toBe(key)
        expect(groupMembers(pid).every((member) => member.state !== "T")).toBe(true)
        expect((yield* fetchWithin(`${url}/alive`)).status).toBe(200)

        // Delete: nothing of the group left, the directory gone.
        expect((yield* call("DELETE", `/api/v1/sandboxes/${id}`, { token: api_key })).body).toEqual({ success: true })
        expect(groupMembers(pid)).toEqual([])
        expect(existsSync(sandboxDir)).toBe(false)
        expect((yield* fetchWithin(`${url}/alive`)).status).toBe(0)
        expect(yield* getSandbox(api_key, id)).toBeNull()
      })
    ), 60_000)

  it.live("gives the sandbox its own environment, never Hangar's", () => {
    process.env.HANGAR_TEST_LEAK = "must-not-reach-sandboxes"
    const dumpEnv = "require('fs').writeFileSync('env.json', JSON.stringify(process.env)); setInterval(() => {}, 1000)"
    const specs = JSON.stringify([{ id: "env", command: [process.execPath, "-e", dumpEnv], initial_env: { EXTRA: "1" } }])
    return withProcesses((dataDir) =>
      Effect.gen(function*() {
        const { api_key } = yield* newMember
        const id = (yield* startSandbox(api_key)).body.id
        const file = join(dataDir, "sandboxes", id, "workspace", "env.json")
        yield* eventually(Effect.sync(() => existsSync(file)), (exists) => exists, 10_000, "env.json")
        yield* Effect.sleep("100 millis")
        const env = JSON.parse(readFileSync(file, "utf8"))
        expect(env.HANGAR_TEST_LEAK).toBeUndefined()
        expect(env.DATABASE_URL).toBeUndefined()
        expect(env.EXTRA).toBe("1")
        expect(env.SANDBOX_ID).toBe(id)
        expect(env.SESSION_API_KEY).toMatch(/^hss_/)
        expect(env.WORKSPACE_DIR).toBe(join(dataDir, "sandboxes", id, "workspace"))
        expect(env.WEBHOOK_BASE_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1\/webhooks$/)
        expect(Number(env.PORT)).toBeGreaterThan(0)
        expect(env.AGENT_SERVER_PORT).toBe(env.PORT)
        for (const name of ["VSCODE_PORT", "WORKER_1_PORT", "WORKER_2_PORT"]) expect(Number(env[name])).toBeGreaterThan(0)
        yield* call("DELETE", `/api/v1/sandboxes/${id}`, { token: api_key })
      }).pipe(Effect.ensuring(Effect.sync(() => delete process.env.HANGAR_TEST_LEAK))), { HANGAR_SANDBOX_SPECS: specs })
  }, 60_000)

  it.live("observes failures: a non-zero exit is ERROR, a clean exit MISSING, no answer within the timeout ERROR", () => {
    const specs = JSON.stringify([
      { id: "fails", command: [process.execPath, "-e", "process.exit(3)"] },
      { id: "ends", command: [process.execPath, "-e", "setTimeout(() => process.exit(0), 300)"] },
      { id: "mute", command: [process.execPath, "-e", "setInterval(() => {}, 1000)"] },
      { id: "absent", command: ["/nonexistent/agent-server"] }
    ])
    return withProcesses(() =>
      Effect.gen(function*() {
        const { api_key } = yield* newMember
        const fails = (yield* startSandbox(api_key, "fails")).body.id
        const ends = (yield* startSandbox(api_key, "ends")).body.id
        const mute = (yield* startSandbox(api_key, "mute")).body.id
        const absent = yield* startSandbox(api_key, "absent")
        expect(absent.body.status).toBe("ERROR")
        yield* untilStatus(api_key, fails, "ERROR")
        yield* untilStatus(api_key, ends, "MISSING")
        const { pid } = yield* storedProcess(mute)
        yield* untilStatus(api_key, mute, "ERROR", 10_000)
        yield* eventually(Effect.sync(() => groupMembers(pid)), (members) => members.length === 0, 5000, "the mute sandbox killed")
        for (const id of [fails, ends]) {
          expect((yield* call("POST", `/api/v1/sandboxes/${id}/pause`, { token: api_key })).status).toBe(409)
          expect((yield* call("POST", `/api/v1/sandboxes/${id}/resume`, { token: api_key })).status).toBe(409)
          expect((yield* call("POST", "/file/create_directory", { token: api_key, body: { sandbox_id: id, path: "x" } })).status)
            .toBe(409)
          expect((yield* call("DELETE", `/api/v1/sandboxes/${id}`, { token: api_key })).status).toBe(200)
        }
      }), { HANGAR_SANDBOX_SPECS: specs, HANGAR_SANDBOX_START_TIMEOUT: "1" })
  }, 60_000)

  it.live("the agent server posts conversation webhooks with its session key, retrying while Hangar fails", () =>
    Effect.gen(function*() {
      const received: Array<{ path: string; headers: IncomingHttpHeaders; body: any }> = []
      let failures = 2
      const receiver = createServer((request, response) => {
        let body = ""
        request.on("data", (chunk) => (body += chunk))
        request.on("end", () => {
          received.push({ path: request.url ?? "", headers: request.headers, body: JSON.parse(body) })
          response.writeHead(failures-- > 0 ? 503 : 200).end("{}")
        })
      })
      yield* Effect.acquireRelease(
        Effect.promise(() => new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))),
        () => Effect.sync(() => receiver.close())
      )
      const publicUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`
      yield* withProcesses(() =>
        Effect.gen(function*() {
          const { api_key } = yield* newMember
          const id = (yield* startSandbox(api_key)).body.id
          const running = yield* untilStatus(api_key, id, "RUNNING")
          const created = yield* fetchWithin(`${agentUrl(running)}/api/conversations`, {
            method: "POST",
            headers: { "x-session-api-key": running.session_api_key },
            body: JSON.stringify({ id: "conv-1", title: "t" })
          })
          expect(created.status).toBe(201)
          yield* eventually(Effect.sync(() => received.length), (n) => n >= 3, 10_000, "three webhook attempts")
          for (const hook of received) {
            expect(hook.path).toBe("/api/v1/webhooks/conversations")
            expect(hook.headers["x-session-api-key"]).toBe(running.session_api_key)
            expect(hook.body).toMatchObject({ id: "conv-1", title: "t", sandbox_id: id, execution_status: "idle" })
          }
          yield* Effect.sleep("1 second")
          expect(received).toHaveLength(3)
          yield* call("DELETE", `/api/v1/sandboxes/${id}`, { token: api_key })
        }), { HANGAR_PUBLIC_URL: publicUrl })
    }).pipe(Effect.scoped), 60_000)
})

describe("POST /file/create_directory", () => {
  it.live("creates directories inside the workspace; refuses .., absolute paths and symlinks out with 422, creating nothing", () =>
    withProcesses((dataDir) =>
      Effect.gen(function*() {
        const { api_key } = yield* newMember
        const id = (yield* startSandbox(api_key)).body.id
        yield* untilStatus(api_key, id, "RUNNING")
        const sandboxDir = join(dataDir, "sandboxes", id)
        const workspace = join(sandboxDir, "workspace")
        const mkdir = (path: string) => call("POST", "/file/create_directory", { token: api_key, body: { sandbox_id: id, path } })

        for (let i = 0; i < 2; i++) {
          expect(yield* mkdir("a/b/c")).toEqual({ status: 200, body: { success: true, path: "a/b/c" } })
        }
        expect(statSync(join(workspace, "a/b/c")).isDirectory()).toBe(true)
        expect((yield* mkdir("a/../d/./e")).body.path).toBe("d/e")

        const outside = mkdtempSync(join(tmpdir(), "hangar-outside-"))
        symlinkSync(outside, join(workspace, "out"))
        mkdirSync(join(workspace, "real"))
        symlinkSync(join(workspace, "real"), join(workspace, "in"))
        writeFileSync(join(workspace, "file"), "")
        const etcBefore = existsSync("/etc/x")

        for (const path of ["../x", "/etc/x", "out/x", "out", "a/../../x", "..", `/${workspace}/y`, "in/../../x"]) {
          const response = yield* mkdir(path)
          expect(response.status, path).toBe(422)
          expect(response.body.detail[0]).toMatchObject({ loc: ["body", "path"], type: "value_error", input: path })
        }
        expect(existsSync(join(sandboxDir, "x"))).toBe(false)
        expect(existsSync("/etc/x")).toBe(etcBefore)
        expect(existsSync(join(outside, "x"))).toBe(false)
        expect(existsSync(join(dataDir, "sandboxes", "x"))).toBe(false)

        // A link that stays inside is followed; a file in the way is a conflict.
        expect((yield* mkdir("in/z")).status).toBe(200)
        expect(statSync(join(workspace, "real", "z")).isDirectory()).toBe(true)
        expect((yield* mkdir("file/sub")).status).toBe(409)
        expect((yield* mkdir("")).status).toBe(422)

        // The agent server's own endpoint applies the same confinement.
        const sandbox = yield* getSandbox(api_key, id)
        const agentMkdir = (path: string, key = sandbox.session_api_key) =>
          fetchWithin(`${agentUrl(sandbox)}/api/file/create_directory`, {
            method: "POST",
            headers: { "x-session-api-key": key },
            body: JSON.stringify({ path })
          })
        expect((yield* agentMkdir("from/agent")).status).toBe(200)
        expect(statSync(join(workspace, "from/agent")).isDirectory()).toBe(true)
        for (const path of ["../y", "/etc/y", "out/y"]) expect((yield* agentMkdir(path)).status, path).toBe(422)
        expect(existsSync(join(sandboxDir, "y"))).toBe(false)
        expect(existsSync(join(outside, "y"))).toBe(false)
        expect((yield* agentMkdir("other", "wrong")).status).toBe(401)
        rmSync(outside, { recursive: true, force: true })
      })
    ), 60_000)
})
