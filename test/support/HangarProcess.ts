import * as Effect from "effect/Effect"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

// The production entry point, compiled (`npm test` builds it first), run as a real process.
export const main = new URL("../../dist/main.js", import.meta.url).pathname

export const start = (vars: Record<string, string>) =>
  spawn(process.execPath, [main], {
    env: { PATH: process.env.PATH, HANGAR_DATA_DIR: mkdtempSync(join(tmpdir(), "hangar-")), ...vars },
    stdio: ["ignore", "pipe", "pipe"]
  })

/** The port in the line Hangar logs once it serves, if `stdout` has it yet. */
const portListenedOn = (stdout: string): number | undefined => {
  const match = /listening on http:\/\/[^:]+:(\d+)/.exec(stdout)
  return match ? Number(match[1]) : undefined
}

/** Output so far, the port once the process listens, and its exit code once it exits. */
export const running = (vars: Record<string, string>) => {
  const child = start(vars)
  const output = { stdout: "", stderr: "" }
  child.stdout!.on("data", (chunk) => (output.stdout += chunk))
  child.stderr!.on("data", (chunk) => (output.stderr += chunk))
  const exit = new Promise<number | null>((resolve) =>
    child.on("exit", (code, signal) => {
      // Said in the output, so a process that dies before listening says how.
      if (signal !== null) output.stderr += `[killed by ${signal}]`
      resolve(code)
    })
  )
  const port = new Promise<number>((resolve, reject) => {
    child.stdout!.on("data", () => {
      const port = portListenedOn(output.stdout)
      if (port !== undefined) resolve(port)
    })
    void exit.then((code) => reject(new Error(`exited with ${code} before listening: ${output.stdout}${output.stderr}`)))
  })
  const stop = async () => {
    child.kill("SIGTERM")
    return exit
  }
  return { child, output, port, exit, stop }
}

export const exited = (child: ChildProcess) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    let stdout = ""
    let stderr = ""
    child.stdout!.on("data", (chunk) => (stdout += chunk))
    child.stderr!.on("data", (chunk) => (stderr += chunk))
    child.on("exit", (code) => resolve({ code, stdout, stderr }))
  })

export const listening = (child: ChildProcess) =>
  new Promise<number>((resolve, reject) => {
    let seen = ""
    child.stdout!.on("data", (chunk) => {
      seen += chunk
      const port = portListenedOn(seen)
      if (port !== undefined) resolve(port)
    })
    child.on("exit", (code) => reject(new Error(`exited with ${code} before listening: ${seen}`)))
  })


/**
 * Starts a Hangar process on `vars` each time `launch` runs, and gives it with its port once it
 * listens; `instances` holds every one started, for the test to kill.
 */
export const launcher = (vars: Record<string, string>) => {
  const instances: Array<ReturnType<typeof running>> = []
  const launch = Effect.suspend(() => {
    const instance = running(vars)
    instances.push(instance)
    return Effect.map(Effect.promise(() => instance.port), (port) => ({ instance, port }))
  })
  return { instances, launch }
}

/** `count` Hangar processes on the same variables, stopped when the scope closes: their ports. */
export const replicas = (vars: Record<string, string>, count: number) =>
  Effect.gen(function*() {
    const instances = Array.from({ length: count }, () => running(vars))
    yield* Effect.addFinalizer(() => Effect.promise(() => Promise.all(instances.map((instance) => instance.stop()))))
    return yield* Effect.promise(() => Promise.all(instances.map((instance) => instance.port)))
  })

/** A call to the Hangar process on `port` with an API key, the JSON answer parsed. */
export const callProcess = (port: number, method: string, path: string, token: string, body?: unknown) =>
  Effect.promise(async () => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { "x-access-token": token, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: response.status, headers: response.headers, body: (await response.json()) as any }
  })
