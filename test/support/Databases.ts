import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { pgliteInMemory } from "../../src/storage/pglite/InMemory.js"
import { MemoryStorage, postgresStorage, type Stores } from "../../src/storage/Storage.js"

/** Set in CI (by .ci/run) when a Postgres server answers; the Postgres runs are skipped without it. */
export const databaseUrl = process.env.DATABASE_URL

/** The URL of a fresh database on the DATABASE_URL server, dropped when the scope closes. */
export const freshPostgresUrl = (url: string) =>
  Effect.gen(function*() {
    const name = `hangar_test_${Date.now().toString(36)}_${crypto.randomUUID().slice(0, 8)}`
    const admin = Context.get(
      yield* Layer.build(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })),
      SqlClient.SqlClient
    )
    yield* admin.unsafe(`CREATE DATABASE ${name}`)
    yield* Effect.addFinalizer(() => Effect.orDie(admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)))
    const target = new URL(url)
    target.pathname = `/${name}`
    return target.toString()
  })

export const freshPostgres = (url: string) =>
  Layer.unwrapScoped(Effect.map(
    freshPostgresUrl(url),
    (fresh) => PgClient.layer({ url: Redacted.make(fresh), maxConnections: 10 })
  ))

/**
 * The storage backends every contract suite runs against: memory and PGlite always, and
 * Postgres when DATABASE_URL is set, each suite on a database of its own.
 */
export const backends: ReadonlyArray<{ readonly name: string; readonly storage: Layer.Layer<Stores, unknown> }> = [
  { name: "memory", storage: MemoryStorage },
  { name: "pglite", storage: postgresStorage("embedded").pipe(Layer.provide(pgliteInMemory)) },
  ...(databaseUrl
    ? [{ name: "postgres", storage: postgresStorage("postgres").pipe(Layer.provide(freshPostgres(databaseUrl))) }]
    : [])
]

/**
 * The SQL backends with their `SqlClient` beside the stores, for tests that read rows as they
 * are stored: PGlite always, Postgres when DATABASE_URL is set.
 */
export const sqlBackends: ReadonlyArray<{
  readonly name: string
  readonly storage: Layer.Layer<Stores | SqlClient.SqlClient, unknown>
}> = [
  { name: "pglite", storage: postgresStorage("embedded").pipe(Layer.provideMerge(pgliteInMemory)) },
  ...(databaseUrl
    ? [{ name: "postgres", storage: postgresStorage("postgres").pipe(Layer.provideMerge(freshPostgres(databaseUrl))) }]
    : [])
]
