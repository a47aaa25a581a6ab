import { PGlite } from "@electric-sql/pglite"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { randomBytes } from "node:crypto"
import { existsSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { groupMembers, readStat } from "../src/sandbox/Procfs.js"
import { databaseUrl, freshPostgresUrl } from "./support/Databases.js"
import { callProcess, launcher, replicas } from "./support/HangarProcess.js"
import { eventually, fetchWithin, killSandboxProcesses, tempDataDir } from "./support/Sandboxes.js"

// Hangar as it runs in production: compiled, as real processes, killed and restarted.

const ADMIN = "hgr_instances-test-admin-key-0123456789"

const api = (port: number, method: string, path: string) => callProcess(port, method, path, ADMIN)

const sandbox = (port: number, id: string) => Effect.map(api(port, "GET", `/api/v1/sandboxes?id=${id}`), (r) => r.body[0])

const untilRunning = (port: number, id: string) =>
  eventually(sandbox(port, id), (s) => s?.status === "RUNNING", 20_000, `sandbox ${id} RUNNING`)

/** What the process driver wrote when it started the sandbox. */
const processOf = (dataDir: string, id: string) =>
  JSON.parse(readFileSync(join(dataDir, "sandboxes", id, "process.json"), "utf8")) as { pid: number; start_time: string }

describe("a Hangar killed while its sandboxes run", () => {
  it.live("finds at its next start that running ones still run, a killed one is MISSING, and kills an orphan", () => {
    const dataDir = tempDataDir("hangar-sigkill-")
    const vars = {
      PORT: "0",
      HOST: "127.0.0.1",
      HANGAR_DATA_DIR: dataDir,
      HANGAR_BOOTSTRAP_API_KEY: ADMIN,
      HANGAR_AUTH_RATE_LIMIT: ""
    }
    const { instances, launch } = launcher(vars)
    return Effect.gen(function*() {
      const first = yield* launch
      const ids: Array<string> = []
      for (let i = 0; i < 3; i++) {
        const started = yield* api(first.port, "POST", "/api/v1/sandboxes")
        expect(started.status, JSON.stringify(started.body)).toBe(200)
        ids.push(started.body.id)
      }
      const [kept, killed, orphaned] = ids
      const before = yield* untilRunning(first.port, kept)
      for (const id of [killed, orphaned]) yield* untilRunning(first.port, id)
      const processes = Object.fromEntries(ids.map((id) => [id, processOf(dataDir, id)]))

      first.instance.child.kill("SIGKILL")
      yield* Effect.promise(() => first.instance.exit)

      // Meanwhile one sandbox dies...
      process.kill(-processes[killed].pid, "SIGKILL")
      yield* eventually(Effect.sync(() => groupMembers(processes[killed].pid)), (m) => m.length === 0, 5000, "killed sandbox gone")
      // ...and another loses its record: the orphan. Its process and directory are exactly what the
      // old instance left; only the row is deleted, from the embedded database Hangar left behind.
      yield* Effect.promise(async () => {
        const db = await PGlite.create(join(dataDir, "pgdata"))
        const deleted = await db.query("DELETE FROM sandboxes WHERE id = $1", [orphaned])
        await db.close()
        expect(deleted.affectedRows).toBe(1)
      })
      expect(readStat(processes[orphaned].pid)?.startTime).toBe(processes[orphaned].start_time)

      const second = yield* launch
      // Reconciled before it listens: the records match reality at once.
      const still = yield* sandbox(second.port, kept)
      expect(still).toMatchObject({ status: "RUNNING", session_api_key: before.session_api_key })
      expect(processOf(dataDir, kept)).toEqual(processes[kept])
      const agent = still.exposed_urls.find((url: any) => url.name === "AGENT_SERVER").url
      expect((yield* fetchWithin(`${agent}/alive`)).status).toBe(200)
      expect(yield* sandbox(second.port, killed)).toMatchObject({ status: "MISSING", session_api_key: null, exposed_urls: null })
      expect(groupMembers(processes[orphaned].pid)).toEqual([])
      expect(existsSync(join(dataDir, "sandboxes", orphaned))).toBe(false)
      expect(yield* sandbox(second.port, orphaned)).toBeNull()

      expect(yield* Effect.promise(() => second.instance.stop())).toBe(0)
      // Stopping Hangar leaves sandboxes running (SPEC §10).
      expect(readStat(processes[kept].pid)?.startTime).toBe(processes[kept].start_time)
    }).pipe(
      Effect.ensuring(Effect.gen(function*() {
        for (const instance of instances) instance.child.kill("SIGKILL")
        yield* killSandboxProcesses(dataDir)
        yield* Effect.sync(() => rmSync(dataDir, { recursive: true, force: true }))
      }))
    )
  }, 120_000)
})

describe("the concurrency limit across replicas", () => {
  it.live.skipIf(!databaseUrl)(
    "20 parallel starts spread over two instances on one Postgres: exactly 5 active, 15 refused with 429",
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
          HANGAR_MAX_CONCURRENT_SANDBOXES: "5"
        }
        const ports = yield* replicas(vars, 2)
        const responses = yield* Effect.all(
          Array.from({ length: 20 }, (_, i) => api(ports[i % 2], "POST", "/api/v1/sandboxes")),
          { concurrency: "unbounded" }
        )
        const ok = responses.filter((r) => r.status === 200)
        const refused = responses.filter((r) => r.status === 429)
        expect(ok).toHaveLength(5)
        expect(refused).toHaveLength(15)
        for (const r of refused) {
          expect(r.body).toMatchObject({ detail: { code: "sandbox_limit_reached", limit: 5, current: 5 } })
          expect(typeof r.body.detail.message).toBe("string")
          expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0)
        }
        for (const port of ports) {
          const listed = yield* api(port, "GET", "/api/v1/sandboxes/search")
          expect(listed.body.items).toHaveLength(5)
          for (const s of listed.body.items) expect(["STARTING", "RUNNING"]).toContain(s.status)
        }
      }).pipe(Effect.scoped),
    120_000
  )
})
