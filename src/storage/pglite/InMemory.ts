import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import type * as PgClient from "@effect/sql-pg/PgClient"
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { mkdirSync, rmSync } from "node:fs"
import { join } from "node:path"
import { client, DatabaseUnavailable, SOCKET_PORT } from "../Database.js"

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
    return client(socketDir)
  }))

