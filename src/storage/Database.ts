import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import type { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Data, Effect, Layer, type Redacted } from "effect"
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"

export class DatabaseUnavailable extends Data.TaggedError("DatabaseUnavailable")<{ readonly message: string }> {}

/** Production: Postgres at `DATABASE_URL`, with a pool shared by every request. */
export const postgres = (url: Redacted.Redacted<string>): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, DatabaseUnavailable> =>
  PgClient.layer({ url, maxConnections: 20, applicationName: "hangar", connectTimeout: "10 seconds" }).pipe(
    Layer.mapError(() => new DatabaseUnavailable({ message: "cannot connect to the Postgres server at DATABASE_URL" }))
  )

/**
 * The embedded default: PGlite (Postgres compiled to WebAssembly) persisted in `dataDir/pgdata`,
 * served to `@effect/sql-pg` over a Unix socket in the data directory, so the Postgres code
 * paths are the only ones. PGlite is a single session: the pool has one connection, and nothing
 * may wait for a second connection while a transaction holds it. A lock file keeps a second
 * Hangar off the same data directory.
 */
export const embedded = (dataDir: string): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, DatabaseUnavailable> =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const root = resolve(dataDir)
    yield* Effect.acquireRelease(lockDataDir(root), () => Effect.sync(() => rmSync(join(root, "hangar.lock"), { force: true })))
    const pglite = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => PGlite.create(join(root, "pgdata")),
        catch: (cause) => new DatabaseUnavailable({ message: `cannot open the embedded database: ${String(cause)}` })
      }),
      (db) => Effect.promise(() => db.close())
    )
    return serveOverSocket(pglite, join(root, "run"))
  }))

/** A volatile PGlite, for tests: the same socket and client as the embedded default. */
export const pgliteInMemory: Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, DatabaseUnavailable> =
  Layer.unwrapScoped(Effect.gen(function*() {
    const pglite = yield* Effect.acquireRelease(Effect.promise(() => PGlite.create()), (db) => Effect.promise(() => db.close()))
    const socketDir = yield* Effect.acquireRelease(
      Effect.sync(() => mkdtempRunDir()),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    )
    return serveOverSocket(pglite, socketDir)
  }))

const mkdtempRunDir = () => {
  const dir = join(process.env.TMPDIR ?? "/tmp", `hangar-pglite-${process.pid}-${crypto.randomUUID().slice(0, 8)}`)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  return dir
}

const SOCKET_PORT = 5432

const serveOverSocket = (pglite: PGlite, socketDir: string) =>
  Layer.unwrapScoped(Effect.gen(function*() {
    mkdirSync(socketDir, { recursive: true, mode: 0o700 })
    const path = join(socketDir, `.s.PGSQL.${SOCKET_PORT}`)
    rmSync(path, { force: true })
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const server = new PGLiteSocketServer({ db: pglite, path })
          await server.start()
          return server
        },
        catch: (cause) => new DatabaseUnavailable({ message: `cannot serve the embedded database: ${String(cause)}` })
      }),
      (server) => Effect.promise(() => server.stop())
    )
    return PgClient.layer({
      host: socketDir,
      port: SOCKET_PORT,
      username: "postgres",
      database: "postgres",
      maxConnections: 1,
      applicationName: "hangar"
    }).pipe(Layer.mapError(() => new DatabaseUnavailable({ message: "cannot connect to the embedded database" })))
  }))

/** Refuses a data directory that a live Hangar process holds. */
const lockDataDir = (root: string) =>
  Effect.try({
    try: () => {
      mkdirSync(root, { recursive: true, mode: 0o700 })
      const lock = join(root, "hangar.lock")
      try {
        closeSync(openSync(lock, "wx", 0o600))
      } catch {
        const holder = Number(readFileSync(lock, "utf8").trim())
        if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
          throw new Error(`the data directory ${root} is in use by process ${holder}`)
        }
      }
      writeFileSync(lock, String(process.pid), { mode: 0o600 })
    },
    catch: (cause) => new DatabaseUnavailable({ message: cause instanceof Error ? cause.message : String(cause) })
  })

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}
