/**
 * The embedded database as a process of its own: PGlite persisted in `<dataDir>/pgdata`, served on
 * the Unix socket `<socketPath>`. Hangar starts it and talks to it over the socket like to any
 * Postgres. Out of Hangar's process, PGlite's WebAssembly heap (a few hundred MB) stays out of the
 * server's memory, and its queries, which run synchronously, run on another core instead of
 * stalling the event loop that serves HTTP.
 *
 * Usage (Hangar does this): node server.js <dataDir> <socketPath>, with an IPC channel. It sends
 * `{ ready: true }` once it accepts connections and stops when told to (SIGTERM) or when its
 * parent is gone (the IPC channel closes), closing the database cleanly.
 */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { mkdirSync, rmSync } from "node:fs"
import { join } from "node:path"
import { acquireLockFile } from "../LockFile.js"

const [dataDir, socketPath] = process.argv.slice(2)

const main = async () => {
  if (!dataDir || !socketPath) throw new Error("usage: server.js <dataDir> <socketPath>")
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  // A previous instance may still be closing (its parent was killed): wait for it.
  const release = await acquireLockFile(join(dataDir, "pgdata.lock"), `the embedded database in ${dataDir}`, 15_000)
  const db = await PGlite.create(join(dataDir, "pgdata"))
  rmSync(socketPath, { force: true })
  const server = new PGLiteSocketServer({ db, path: socketPath })
  await server.start()

  let stopping = false
  const stop = async () => {
    if (stopping) return
    stopping = true
    await server.stop()
    await db.close()
    rmSync(socketPath, { force: true })
    release()
    process.exit(0)
  }
  process.on("SIGTERM", stop)
  process.on("disconnect", stop)
  // Ctrl-C reaches the whole process group: Hangar stops first, then tells this process to.
  process.on("SIGINT", () => {})
  process.send?.({ ready: true })
}

main().catch((error: unknown) => {
  process.send?.({ error: error instanceof Error ? error.message : String(error) })
  process.exit(1)
})
