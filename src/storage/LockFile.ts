import { closeSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs"

/**
 * A lock file holding the owner's pid. A lock whose owner is dead is stale and taken over; a live
 * owner's lock is waited for up to `waitMs` (a process that is shutting down releases it soon),
 * then refused. Plain Node, no Effect: the embedded database process uses it too.
 */
export const acquireLockFile = async (path: string, description: string, waitMs = 0): Promise<() => void> => {
  const deadline = Date.now() + waitMs
  for (;;) {
    try {
      closeSync(openSync(path, "wx", 0o600))
      break
    } catch {
      const holder = Number(readFileSync(path, "utf8").trim())
      if (!(Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder))) break
      if (Date.now() >= deadline) throw new Error(`${description} is in use by process ${holder}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  writeFileSync(path, String(process.pid), { mode: 0o600 })
  return () => {
    try {
      if (Number(readFileSync(path, "utf8").trim()) === process.pid) rmSync(path, { force: true })
    } catch {
      // Already gone.
    }
  }
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}
