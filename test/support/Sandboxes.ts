import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { listPids, readEnviron } from "../../src/sandbox/Procfs.js"
import type { OrganizationId, UserId } from "../../src/domain/Identity.js"
import type { SandboxId } from "../../src/domain/Sandbox.js"
import { instanceIdentity } from "../../src/sandbox/SandboxDriver.js"
import { SandboxStore } from "../../src/storage/SandboxStore.js"
import { ADMIN_KEY, call, testServer } from "./TestServer.js"

/** A new member of the `default` organisation, with a key of their own. */
export const newMember = Effect.suspend(() =>
  Effect.map(
    call("POST", "/api/organizations/provision-user", {
      token: ADMIN_KEY,
      body: { email: `member.${crypto.randomUUID().slice(0, 8)}@example.com`, issue_api_key: true }
    }),
    ({ body, status }) => {
      expect(status, JSON.stringify(body)).toBe(200)
      return body as { user_id: UserId; org_id: OrganizationId; api_key: string }
    }
  )
)

export const startSandbox = (token: string, specId?: string) =>
  call("POST", `/api/v1/sandboxes${specId === undefined ? "" : `?sandbox_spec_id=${encodeURIComponent(specId)}`}`, { token })

export const getSandbox = (token: string, id: string) =>
  Effect.map(call("GET", `/api/v1/sandboxes?id=${encodeURIComponent(id)}`, { token }), ({ body, status }) => {
    expect(status, JSON.stringify(body)).toBe(200)
    return body[0] as any
  })

/** Polls until `done` holds of the value, or fails after `timeoutMs`. */
export const eventually = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  done: (value: A) => boolean,
  timeoutMs = 15_000,
  what = "the condition"
) =>
  Effect.gen(function*() {
    const deadline = Date.now() + timeoutMs
    while (true) {
      const value = yield* effect
      if (done(value)) return value
      if (Date.now() > deadline) {
        return yield* Effect.dieMessage(`timed out waiting for ${what}; last value: ${JSON.stringify(value)}`)
      }
      yield* Effect.sleep("100 millis")
    }
  })

export const untilStatus = (token: string, id: string, status: string, timeoutMs = 15_000) =>
  eventually(getSandbox(token, id), (sandbox) => sandbox?.status === status, timeoutMs, `sandbox ${id} to be ${status}`)

/** A fresh data directory for a Hangar whose sandboxes are real processes. */
export const tempDataDir = (prefix = "hangar-sandboxes-") => mkdtempSync(join(tmpdir(), prefix))

/**
 * Kills every process a Hangar on this data directory started (by the marker its driver puts in
 * their environment), whatever a test left behind, failed or not.
 */
export const killSandboxProcesses = (dataDir: string) =>
  Effect.sync(() => {
    const owner = instanceIdentity(dataDir)
    for (const pid of listPids()) {
      if (readEnviron(pid)?.get("HANGAR_SANDBOX_OWNER") !== owner) continue
      try {
        process.kill(pid, "SIGKILL")
      } catch {
        // Already gone.
      }
    }
  })

/** GET with a deadline: a stopped agent server accepts the connection but never answers. */
export const fetchWithin = (url: string, init: RequestInit = {}, timeoutMs = 1000) =>
  Effect.promise(() =>
    fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) }).then(
      async (response) => ({ status: response.status, body: await response.text() }),
      () => ({ status: 0, body: "" })
    )
  )

/** Processes of this Hangar instance's sandboxes still alive (by the marker in their environment). */
export const sandboxProcesses = (dataDir: string) =>
  Effect.sync(() => {
    const owner = instanceIdentity(dataDir)
    return listPids().filter((pid) => readEnviron(pid)?.get("HANGAR_SANDBOX_OWNER") === owner)
  })

/**
 * Runs a test against a Hangar whose sandboxes are real processes (the process driver, running
 * the reference agent server compiled into dist/), on a data directory of its own; whatever it
 * started is killed and the directory removed afterwards, failed or not.
 */
export const withProcesses = <A, E, R>(
  test: (dataDir: string) => Effect.Effect<A, E, R>,
  vars: Record<string, string> = {}
) => {
  const dataDir = tempDataDir()
  return test(dataDir).pipe(
    Effect.provide(testServer({ HANGAR_SANDBOX_DRIVER: "process", HANGAR_DATA_DIR: dataDir, ...vars })),
    Effect.ensuring(Effect.zipRight(killSandboxProcesses(dataDir), Effect.sync(() => rmSync(dataDir, { recursive: true, force: true }))))
  )
}

/** The process the driver recorded for a sandbox. */
export const storedProcess = (id: string) =>
  Effect.map(
    Effect.flatMap(SandboxStore, (store) => store.find(id as SandboxId)),
    (record) => Option.getOrThrow(record).process!
  )

export const agentUrl = (sandbox: any) => sandbox.exposed_urls.find((url: any) => url.name === "AGENT_SERVER").url as string
