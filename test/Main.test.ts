import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { randomBytes } from "node:crypto"
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { databaseUrl, freshPostgresUrl } from "./support/Databases.js"
import { exited, listening, main, running, start } from "./support/HangarProcess.js"

/** Pids of the embedded database processes serving `dataDir`, found in /proc. */
const childrenOf = (dataDir: string) =>
  readdirSync("/proc").filter((pid) => /^\d+$/.test(pid)).filter((pid) => {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")
      return cmdline.some((arg) => arg.endsWith("storage/pglite/server.js")) && cmdline.includes(dataDir)
    } catch {
      return false
    }
  })

const bootstrapKeys = (stdout: string) => Array.from(stdout.matchAll(/^Bootstrap API key .*: (hgr_\S+)$/gm), (m) => m[1])

const currentKey = (port: number, key: string) =>
  fetch(`http://127.0.0.1:${port}/api/keys/current`, { headers: { "x-access-token": key } })

describe("the hangar process", () => {
  it("dist/main.js is built", () => {
    expect(existsSync(main), "run `npm run build` first").toBe(true)
  })

  it("serves the config, logs one JSON line per request, and stops cleanly on SIGTERM", async () => {
    const child = start({ PORT: "0", HOST: "127.0.0.1", HANGAR_STORAGE: "memory" })
    const done = exited(child)
    const port = await listening(child)
    const response = await fetch(`http://127.0.0.1:${port}/api/v1/web-client/config?ignored=1`)
    expect(response.status).toBe(200)
    expect(((await response.json()) as { kind: string }).kind).toBe("WebClientConfig")
    child.kill("SIGTERM")
    const { code, stdout } = await done
    expect(code).toBe(0)
    const lines = stdout.trim().split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line))
    const requests = lines.filter((line) => line.msg === "request")
    expect(requests).toHaveLength(1)
    expect(requests[0]).toMatchObject({
      level: "info",
      method: "GET",
      path: "/api/v1/web-client/config",
      status: 200
    })
    expect(typeof requests[0].duration_ms).toBe("number")
  })

  it("stops on SIGINT too", async () => {
    const child = start({ PORT: "0", HOST: "127.0.0.1", HANGAR_STORAGE: "memory" })
    const done = exited(child)
    await listening(child)
    child.kill("SIGINT")
    expect((await done).code).toBe(0)
  })

  it("refuses to start on a bad value, naming the variable on one line", async () => {
    for (
      const [vars, expected] of [
        [{ HANGAR_APP_MODE: "enterprise" }, "HANGAR_APP_MODE: expected one of oss, saas (got \"enterprise\")"],
        [{ PORT: "abc" }, "PORT: expected an integer 0..65535"],
        [{ HANGAR_ACP_PROVIDERS: "[{\"key\": 1}]" }, "HANGAR_ACP_PROVIDERS: expected JSON"]
      ] as const
    ) {
      const { code, stderr, stdout } = await exited(start(vars))
      expect(code).not.toBe(0)
      expect(stdout).toBe("")
      expect(stderr.trim().split("\n")).toHaveLength(1)
      expect(stderr).toContain(`hangar: invalid configuration: ${expected}`)
    }
  })
})

describe("persistence", () => {
  const secretKey = randomBytes(32).toString("base64")

  const restartKeepsData = async (vars: Record<string, string>) => {
    const first = running(vars)
    const port = await first.port
    const [key, ...more] = bootstrapKeys(first.output.stdout)
    expect(key, first.output.stdout).toMatch(/^hgr_/)
    expect(more).toEqual([])
    expect((await currentKey(port, key)).status).toBe(200)
    const created = await fetch(`http://127.0.0.1:${port}/api/organizations/provision-user`, {
      method: "POST",
      headers: { "x-access-token": key, "content-type": "application/json" },
      body: JSON.stringify({ email: "kept@example.com", issue_api_key: true })
    })
    const provisioned = (await created.json()) as { user_id: string; api_key: string }
    expect(created.status).toBe(200)
    expect(await first.stop()).toBe(0)

    const second = running(vars)
    const port2 = await second.port
    expect(bootstrapKeys(second.output.stdout)).toEqual([])
    expect((await currentKey(port2, key)).status).toBe(200)
    const member = await currentKey(port2, provisioned.api_key)
    expect(member.status).toBe(200)
    expect(((await member.json()) as { user_id: string }).user_id).toBe(provisioned.user_id)
    expect(await second.stop()).toBe(0)
    return key
  }

  it("the embedded default prints the bootstrap key once, writes it 0600, and keeps keys and users across restarts", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "hangar-embedded-"))
    const key = await restartKeepsData({ PORT: "0", HOST: "127.0.0.1", HANGAR_DATA_DIR: dataDir })
    const file = join(dataDir, "bootstrap-api-key")
    expect(readFileSync(file, "utf8").trim()).toBe(key)
    expect(statSync(file).mode & 0o777).toBe(0o600)
  }, 120_000)

  it("runs the embedded database as its own process, which goes away with Hangar, even a SIGKILLed one", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "hangar-child-"))
    const vars = { PORT: "0", HOST: "127.0.0.1", HANGAR_DATA_DIR: dataDir }
    const databaseProcesses = () => childrenOf(dataDir)
    const first = running(vars)
    const port = await first.port
    const [key] = bootstrapKeys(first.output.stdout)
    expect(databaseProcesses()).toHaveLength(1)
    first.child.kill("SIGKILL")
    await new Promise((resolve) => first.child.on("exit", resolve))
    // Without its parent the database process closes the database and exits.
    for (let i = 0; i < 100 && databaseProcesses().length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 100))
    expect(databaseProcesses()).toEqual([])

    const second = running(vars)
    expect((await currentKey(await second.port, key)).status).toBe(200)
    expect(port).toBeGreaterThan(0)
    expect(await second.stop()).toBe(0)
    expect(databaseProcesses()).toEqual([])
  }, 120_000)

  it("refuses a second process on the same data directory", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "hangar-locked-"))
    const first = running({ PORT: "0", HOST: "127.0.0.1", HANGAR_DATA_DIR: dataDir })
    await first.port
    const { code, stderr } = await exited(start({ PORT: "0", HOST: "127.0.0.1", HANGAR_DATA_DIR: dataDir }))
    expect(code).not.toBe(0)
    expect(stderr).toContain(`is in use by process ${first.child.pid}`)
    expect(await first.stop()).toBe(0)
  }, 120_000)

  it.skipIf(!databaseUrl)("with DATABASE_URL the same holds on Postgres", async () => {
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const url = yield* freshPostgresUrl(databaseUrl!)
      yield* Effect.promise(() => restartKeepsData({ PORT: "0", HOST: "127.0.0.1", DATABASE_URL: url, HANGAR_SECRET_KEY: secretKey }))
    })))
  }, 120_000)

  it.skipIf(!databaseUrl)("a key deleted on one replica is refused at once by another that has it cached; so is an expired one", async () => {
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const url = yield* freshPostgresUrl(databaseUrl!)
      const admin = "hgr_replica-test-admin-key-0123456789"
      const vars = { PORT: "0", HOST: "127.0.0.1", DATABASE_URL: url, HANGAR_SECRET_KEY: secretKey, HANGAR_AUTH_RATE_LIMIT: "" }
      const a = running({ ...vars, HANGAR_BOOTSTRAP_API_KEY: admin })
      const portA = yield* Effect.promise(() => a.port)
      const b = running(vars)
      const portB = yield* Effect.promise(() => b.port)
      const create = (body: Record<string, unknown>) =>
        fetch(`http://127.0.0.1:${portA}/api/keys`, {
          method: "POST",
          headers: { "x-access-token": admin, "content-type": "application/json" },
          body: JSON.stringify({ name: "replicated", ...body })
        }).then((response) => response.json() as Promise<{ id: string; key: string }>)
      yield* Effect.promise(async () => {
        for (let round = 0; round < 15; round++) {
          const created = await create({})
          // Used twice on B: the second use finds the key in B's memory.
          expect((await currentKey(portB, created.key)).status).toBe(200)
          expect((await currentKey(portB, created.key)).status).toBe(200)
          const deleted = await fetch(`http://127.0.0.1:${portA}/api/keys/${created.id}`, {
            method: "DELETE",
            headers: { "x-access-token": admin }
          })
          expect(deleted.status).toBe(204)
          expect((await currentKey(portB, created.key)).status, `round ${round}`).toBe(401)
        }
        const expiring = await create({ expires_at: new Date(Date.now() + 1500).toISOString() })
        expect((await currentKey(portB, expiring.key)).status).toBe(200)
        await new Promise((resolve) => setTimeout(resolve, 1600))
        expect((await currentKey(portB, expiring.key)).status).toBe(401)
      })
      for (const instance of [a, b]) expect(yield* Effect.promise(() => instance.stop())).toBe(0)
    })))
  }, 120_000)

  it.skipIf(!databaseUrl)("two instances started together on one Postgres migrate and bootstrap once, and both serve", async () => {
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const url = yield* freshPostgresUrl(databaseUrl!)
      const vars = { PORT: "0", HOST: "127.0.0.1", DATABASE_URL: url, HANGAR_SECRET_KEY: secretKey }
      const instances = [running(vars), running(vars)]
      const ports = yield* Effect.promise(() => Promise.all(instances.map((instance) => instance.port)))
      const outputs = instances.map((instance) => instance.output.stdout)
      const migrated = outputs.filter((stdout) => stdout.includes("\"msg\":\"applied migrations\""))
      expect(migrated).toHaveLength(1)
      const keys = outputs.flatMap(bootstrapKeys)
      expect(keys).toHaveLength(1)
      for (const port of ports) {
        const ready = yield* Effect.promise(() => fetch(`http://127.0.0.1:${port}/readyz`))
        expect(ready.status).toBe(200)
        expect(yield* Effect.promise(() => ready.json())).toEqual({ status: "ready", storage: "postgres" })
        expect((yield* Effect.promise(() => currentKey(port, keys[0]))).status).toBe(200)
      }
      for (const instance of instances) expect(yield* Effect.promise(() => instance.stop())).toBe(0)
    })))
  }, 120_000)
})
