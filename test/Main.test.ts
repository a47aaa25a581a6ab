import { describe, expect, it } from "@effect/vitest"
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

// The production entry point, compiled (`npm test` builds it first), run as a real process.
const main = new URL("../dist/main.js", import.meta.url).pathname

const start = (vars: Record<string, string>) =>
  spawn(process.execPath, [main], {
    env: { PATH: process.env.PATH, HANGAR_DATA_DIR: mkdtempSync(join(tmpdir(), "hangar-")), ...vars },
    stdio: ["ignore", "pipe", "pipe"]
  })

const exited = (child: ChildProcess) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    let stdout = ""
    let stderr = ""
    child.stdout!.on("data", (chunk) => (stdout += chunk))
    child.stderr!.on("data", (chunk) => (stderr += chunk))
    child.on("exit", (code) => resolve({ code, stdout, stderr }))
  })

const listening = (child: ChildProcess) =>
  new Promise<number>((resolve, reject) => {
    let seen = ""
    child.stdout!.on("data", (chunk) => {
      seen += chunk
      const match = /listening on http:\/\/[^:]+:(\d+)/.exec(seen)
      if (match) resolve(Number(match[1]))
    })
    child.on("exit", (code) => reject(new Error(`exited with ${code} before listening: ${seen}`)))
  })

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
    const lines = stdout.trim().split("\n").map((line) => JSON.parse(line))
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
