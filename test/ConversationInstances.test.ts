import * as PgClient from "@effect/sql-pg/PgClient"
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { randomBytes } from "node:crypto"
import { existsSync, rmSync } from "node:fs"
import { join } from "node:path"
import type { OrganizationId } from "../src/domain/Identity.js"
import { StartTaskStore } from "../src/storage/StartTaskStore.js"
import { postgresStorage } from "../src/storage/Storage.js"
import { databaseUrl, freshPostgresUrl } from "./support/Databases.js"
import { callProcess, launcher, replicas } from "./support/HangarProcess.js"
import { eventually, killSandboxProcesses, sandboxProcesses, tempDataDir } from "./support/Sandboxes.js"

// The daily quota as production runs it: compiled Hangar processes, replicas on one Postgres.

const ADMIN = "hgr_quota-instances-admin-key-0123456789"

describe("the daily conversation quota across replicas", () => {
  it.live.skipIf(!databaseUrl)(
    "30 parallel starts over two instances on one Postgres, limit 10: exactly 10 accepted, 20 refused; an exempt organisation is not limited",
    () =>
      Effect.gen(function*() {
        const url = yield* freshPostgresUrl(databaseUrl!)
        const vars = {
          PORT: "0",
          HOST: "127.0.0.1",
          DATABASE_URL: url,
          HANGAR_SECRET_KEY: randomBytes(32).toString("base64"),
          HANGAR_BOOTSTRAP_API_KEY: ADMIN,
          HANGAR_AUTH_RATE_LIMIT: "",
          HANGAR_SANDBOX_DRIVER: "memory",
          HANGAR_MAX_CONCURRENT_SANDBOXES: "100",
          HANGAR_DAILY_CONVERSATION_LIMIT: "10"
        }
        const ports = yield* replicas(vars, 2)

        const member = yield* callProcess(ports[0], "POST", "/api/organizations/provision-user", ADMIN, {
          email: "quota@example.com",
          issue_api_key: true
        })
        expect(member.status, JSON.stringify(member.body)).toBe(200)
        const token: string = member.body.api_key
        const burst = (n: number) =>
          Effect.all(
            Array.from({ length: n }, (_, i) => callProcess(ports[i % 2], "POST", "/api/v1/app-conversations", token, {})),
            { concurrency: "unbounded" }
          )

        const responses = yield* burst(30)
        const accepted = responses.filter((r) => r.status === 200)
        const refused = responses.filter((r) => r.status === 429)
        expect(accepted).toHaveLength(10)
        expect(refused).toHaveLength(20)
        for (const r of refused) {
          expect(r.body.detail).toMatchObject({ code: "daily_conversation_limit_reached", limit: 10, used: 10 })
          expect(r.body.detail.reset_at).toMatch(/T00:00:00\.000Z$/)
          expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0)
        }
        // Every accepted task, run by whichever instance took it, becomes READY; both see the same count.
        for (const [index, r] of accepted.entries()) {
          const port = ports[index % 2]
          yield* eventually(
            callProcess(port, "GET", `/api/v1/app-conversations/start-tasks?id=${r.body.id}`, token),
            ({ body }) => body[0]?.status === "READY",
            20_000,
            `task ${r.body.id} READY`
          )
        }
        for (const port of ports) {
          expect((yield* callProcess(port, "GET", "/api/quota/status", token)).body).toMatchObject({
            daily_limit: 10,
            used_today: 10,
            remaining: 0
          })
          expect((yield* callProcess(port, "GET", "/api/v1/app-conversations/count", token)).body).toBe(10)
        }

        // The organisation made exempt, through the storage port on the same database.
        const stores = yield* Layer.build(
          postgresStorage("postgres").pipe(Layer.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 2 })))
        )
        yield* Context.get(stores, StartTaskStore).setLimitOverride(
          { _tag: "Organization", id: member.body.org_id as OrganizationId },
          Option.some(-1)
        )
        expect((yield* burst(15)).map((r) => r.status)).toEqual(Array(15).fill(200))
        expect((yield* callProcess(ports[1], "GET", "/api/quota/status", token)).body).toMatchObject({
          daily_limit: null,
          used_today: 25,
          remaining: null
        })
      }).pipe(Effect.scoped),
    120_000
  )
})

describe("a Hangar killed while a conversation starts", () => {
  it.live("marks the task ERROR at its next start, gives the quota back and deletes the sandbox the task started", () => {
    const dataDir = tempDataDir("hangar-task-crash-")
    // A sandbox that runs but never answers: its task waits for it until Hangar is killed.
    const mute = JSON.stringify([{ id: "mute", command: [process.execPath, "-e", "setInterval(() => {}, 1000)"] }])
    const vars = {
      PORT: "0",
      HOST: "127.0.0.1",
      HANGAR_DATA_DIR: dataDir,
      HANGAR_BOOTSTRAP_API_KEY: ADMIN,
      HANGAR_AUTH_RATE_LIMIT: "",
      HANGAR_SANDBOX_SPECS: mute,
      HANGAR_SANDBOX_START_TIMEOUT: "600",
      HANGAR_DAILY_CONVERSATION_LIMIT: "3"
    }
    const { instances, launch } = launcher(vars)
    return Effect.gen(function*() {
      const first = yield* launch
      const started = yield* callProcess(first.port, "POST", "/api/v1/app-conversations", ADMIN, { title: "interrupted" })
      expect(started.status, JSON.stringify(started.body)).toBe(200)
      const task = (yield* eventually(
        callProcess(first.port, "GET", `/api/v1/app-conversations/start-tasks?id=${started.body.id}`, ADMIN),
        ({ body }) => body[0]?.status === "WAITING_FOR_SANDBOX",
        20_000,
        "the task waiting for its sandbox"
      )).body[0]
      yield* eventually(sandboxProcesses(dataDir), (pids) => pids.length > 0, 10_000, "the sandbox process")
      expect((yield* callProcess(first.port, "GET", "/api/quota/status", ADMIN)).body.used_today).toBe(1)

      first.instance.child.kill("SIGKILL")
      yield* Effect.promise(() => first.instance.exit)
      // Hangar is gone; the sandbox it was waiting for is not.
      expect((yield* sandboxProcesses(dataDir)).length).toBeGreaterThan(0)

      const second = yield* launch
      const after = (yield* callProcess(second.port, "GET", `/api/v1/app-conversations/start-tasks?id=${task.id}`, ADMIN)).body[0]
      expect(after).toMatchObject({
        status: "ERROR",
        detail: "Hangar restarted before the conversation was started",
        app_conversation_id: null,
        sandbox_id: task.sandbox_id
      })
      expect((yield* callProcess(second.port, "GET", "/api/quota/status", ADMIN)).body).toMatchObject({ used_today: 0, remaining: 3 })
      expect(yield* sandboxProcesses(dataDir)).toEqual([])
      expect(existsSync(join(dataDir, "sandboxes", task.sandbox_id))).toBe(false)
      expect((yield* callProcess(second.port, "GET", `/api/v1/sandboxes?id=${task.sandbox_id}`, ADMIN)).body).toEqual([null])
    }).pipe(
      Effect.ensuring(Effect.gen(function*() {
        for (const instance of instances) instance.child.kill("SIGKILL")
        yield* killSandboxProcesses(dataDir)
        yield* Effect.sync(() => rmSync(dataDir, { recursive: true, force: true }))
      }))
    )
  }, 120_000)
})
