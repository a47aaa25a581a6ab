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
      const match = /listening on http:\/\/[^:]+:(\d+)/.exec(output.stdout)
      if (match) resolve(Number(match[1]))
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
      const match = /listening on http:\/\/[^:]+:(\d+)/.exec(seen)
      if (match) resolve(Number(match[1]))
    })
    child.on("exit", (code) => reject(new Error(`exited with ${code} before listening: ${seen}`)))
  })

