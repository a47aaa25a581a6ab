import type * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdirSync } from "node:fs"
import { join, resolve } from "node:path"
import { compiledProgram } from "../PackagePaths.js"
import { acquireLockFile } from "./LockFile.js"

export class DatabaseUnavailable extends Data.TaggedError("DatabaseUnavailable")<{ readonly message: string }> {}

/** Production: Postgres at `DATABASE_URL`, with a pool shared by every request. */
export const postgres = (url: Redacted.Redacted<string>): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, DatabaseUnavailable> =>
  PgClient.layer({ url, maxConnections: 20, applicationName: "hangar", connectTimeout: "10 seconds" }).pipe(
    Layer.mapError(() => new DatabaseUnavailable({ message: "cannot connect to the Postgres server at DATABASE_URL" }))
  )

/**
 * The embedded default: PGlite (Postgres compiled to WebAssembly) persisted in `dataDir/pgdata`,
 * run as a child process (`storage/pglite/server.ts`) and reached over a Unix socket in the data
 * directory, so the Postgres code paths are the only ones. PGlite is a single session: the pool
 * has one connection, and nothing may wait for a second connection while a transaction holds it.
 * A lock file keeps a second Hangar off the same data directory.
 */
export const embedded = (dataDir: string): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, DatabaseUnavailable> =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const root = resolve(dataDir)
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => {
          mkdirSync(root, { recursive: true, mode: 0o700 })
          return acquireLockFile(join(root, "hangar.lock"), `the data directory ${root}`)
        },
        catch: (cause) => new DatabaseUnavailable({ message: cause instanceof Error ? cause.message : String(cause) })
      }),
      (release) => Effect.sync(release)
    )
    const socketDir = join(root, "run")
    mkdirSync(socketDir, { recursive: true, mode: 0o700 })
    yield* Effect.acquireRelease(startDatabaseProcess(root, join(socketDir, `.s.PGSQL.${SOCKET_PORT}`)), stopProcess)
    return client(socketDir)
  }))

/** Starts the embedded database process and waits until it accepts connections. */
const startDatabaseProcess = (root: string, socketPath: string) =>
  Effect.async<ChildProcess, DatabaseUnavailable>((resume) => {
    const child = spawn(process.execPath, [compiledProgram("storage/pglite/server.js"), root, socketPath], {
      stdio: ["ignore", "inherit", "inherit", "ipc"]
    })
    const failed = (message: string) => {
      child.kill("SIGKILL")
      resume(Effect.fail(new DatabaseUnavailable({ message: `cannot start the embedded database: ${message}` })))
    }
    child.once("message", (message: { ready?: boolean; error?: string }) =>
      message.ready ? resume(Effect.succeed(child)) : failed(message.error ?? "unknown error"))
    child.once("error", (error) => failed(error.message))
    child.once("exit", (code) => failed(`it exited with code ${code}`))
    return Effect.sync(() => child.kill("SIGKILL"))
  }).pipe(Effect.map((child) => {
    child.removeAllListeners("exit")
    return child
  }))

/** Asks it to close the database, and insists after ten seconds. */
const stopProcess = (child: ChildProcess) =>
  Effect.async<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    const insist = setTimeout(() => child.kill("SIGKILL"), 10_000)
    child.once("exit", () => {
      clearTimeout(insist)
      resume(Effect.void)
    })
    child.kill("SIGTERM")
  })

export const SOCKET_PORT = 5432

/** The one-connection client of a PGlite behind a socket in `socketDir`. */
export const client = (socketDir: string) =>
  PgClient.layer({
    host: socketDir,
    port: SOCKET_PORT,
    username: "postgres",
    database: "postgres",
    maxConnections: 1,
    applicationName: "hangar"
  }).pipe(Layer.mapError(() => new DatabaseUnavailable({ message: "cannot connect to the embedded database" })))
