import * as SqlClient from "@effect/sql/SqlClient"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { UserId } from "../../domain/Identity.js"
import { type SandboxId, type SandboxPatch, SandboxProcess, SandboxRecord } from "../../domain/Sandbox.js"
import {
  type Activation,
  decideActivation,
  pausedForLimit,
  type SandboxLimit,
  SandboxStore,
  type SandboxStoreShape
} from "../SandboxStore.js"
import { sqlErrorsAreDefects, type WithSqlErrors } from "./Defects.js"
import { fromRow, toDate } from "./Rows.js"

const recordFromRow = fromRow(SandboxRecord)

/** The process is two columns; the exposed URLs a JSON array. */
const toRecord = (row: Record<string, unknown>): SandboxRecord => {
  const { pid, process_start_time, ...rest } = row
  return recordFromRow({
    ...rest,
    process: pid === null ? null : SandboxProcess.make({ pid: pid as number, start_time: process_start_time as string })
  })
}

const json = (value: unknown) => (value === null ? null : JSON.stringify(value))

/** A patch as the columns it sets (only those it names). */
const columns = (patch: SandboxPatch): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  if (patch.status !== undefined) out.status = patch.status
  if (patch.desired_state !== undefined) out.desired_state = patch.desired_state
  if (patch.session_key_sealed !== undefined) out.session_key_sealed = patch.session_key_sealed
  if (patch.process !== undefined) {
    out.pid = patch.process?.pid ?? null
    out.process_start_time = patch.process?.start_time ?? null
  }
  if (patch.exposed_urls !== undefined) out.exposed_urls = json(patch.exposed_urls)
  if (patch.exit_code !== undefined) out.exit_code = patch.exit_code
  if (patch.starting_since !== undefined) out.starting_since = toDate(patch.starting_since)
  if (patch.deleted_at !== undefined) out.deleted_at = toDate(patch.deleted_at)
  return out
}

/** The advisory-lock namespace of per-user sandbox limits (the second key is the user's hash). */
const LIMIT_LOCK = 7_243_103

export const SandboxStorePg = Layer.effect(
  SandboxStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const cas = (id: SandboxId, version: number, patch: SandboxPatch) =>
      Effect.map(
        sql`UPDATE sandboxes SET ${sql.update({ ...columns(patch), updated_at: new Date() })}, version = version + 1
            WHERE id = ${id} AND version = ${version} RETURNING *`,
        (rows) => Option.map(Option.fromNullable(rows[0]), toRecord)
      )

    /**
     * Inside the caller's transaction: serialises limit decisions for the user across every
     * replica, then decides for one more active sandbox and gives up the oldest if need be.
     */
    const makeRoom = (userId: UserId, except: SandboxId, limit: SandboxLimit) =>
      Effect.gen(function*() {
        yield* sql`SELECT pg_advisory_xact_lock(${LIMIT_LOCK}, hashtext(${userId}))`
        const others = (yield* sql`
          SELECT * FROM sandboxes
          WHERE created_by_user_id = ${userId} AND id <> ${except}
            AND desired_state = 'RUNNING' AND status IN ('STARTING', 'RUNNING')`).map(toRecord)
        const decision = decideActivation(others, limit, (a, b) => a.epochMillis - b.epochMillis)
        if (decision._tag === "LimitReached") return decision
        if (Option.isNone(decision.pause)) return { _tag: "Allowed" as const, paused: Option.none<SandboxRecord>() }
        const victim = others.find((record) => record.id === decision.pause.pipe(Option.getOrThrow))!
        const paused = yield* cas(victim.id, victim.version, pausedForLimit)
        if (Option.isNone(paused)) return yield* new CasLost()
        return { _tag: "Allowed" as const, paused }
      })

    const store: WithSqlErrors<SandboxStoreShape> = {
      insert: (record, limit) =>
        sql.withTransaction(Effect.gen(function*() {
          const room = yield* makeRoom(record.created_by_user_id, record.id, limit)
          if (room._tag === "LimitReached") return room
          const { exposed_urls, process, ...rest } = record
          const rows = yield* sql`INSERT INTO sandboxes ${
            sql.insert({
              ...rest,
              ...columns({ process, exposed_urls }),
              starting_since: toDate(record.starting_since),
              created_at: toDate(record.created_at),
              updated_at: toDate(record.updated_at),
              deleted_at: toDate(record.deleted_at)
            })
          } RETURNING *`
          return { _tag: "Activated", record: toRecord(rows[0]), paused: room.paused } satisfies Activation
        })).pipe(conflicted),
      activate: (id, version, patch, limit) =>
        sql.withTransaction(Effect.gen(function*() {
          const owner = yield* sql<{ created_by_user_id: UserId }>`SELECT created_by_user_id FROM sandboxes WHERE id = ${id}`
          if (owner.length === 0) return { _tag: "Conflict" } satisfies Activation
          const room = yield* makeRoom(owner[0].created_by_user_id, id, limit)
          if (room._tag === "LimitReached") return room
          const updated = yield* cas(id, version, patch)
          // Losing the compare-and-set rolls back the pause made for it.
          if (Option.isNone(updated)) return yield* new CasLost()
          return { _tag: "Activated", record: updated.value, paused: room.paused } satisfies Activation
        })).pipe(conflicted),
      update: cas,
      find: (id) => Effect.map(sql`SELECT * FROM sandboxes WHERE id = ${id}`, (rows) => Option.map(Option.fromNullable(rows[0]), toRecord)),
      search: ({ after, limit, status, userId }) => {
        const conditions = [
          sql`created_by_user_id = ${userId}`,
          sql`desired_state <> 'DELETED'`,
          ...(Option.isSome(status) ? [sql`status = ${status.value}`] : []),
          ...(Option.isSome(after)
            ? [sql`(created_at, id) < (${new Date(after.value[0])}, ${after.value[1]})`]
            : [])
        ]
        return Effect.map(
          sql`SELECT * FROM sandboxes WHERE ${sql.and(conditions)} ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
          (rows) => rows.map(toRecord)
        )
      },
      listForInstance: (instanceId) =>
        Effect.map(
          sql`SELECT * FROM sandboxes WHERE instance_id = ${instanceId} AND deleted_at IS NULL ORDER BY created_at, id`,
          (rows) => rows.map(toRecord)
        ),
      findBySessionKeyHash: (hash) =>
        Effect.map(
          sql`SELECT * FROM sandboxes WHERE session_key_hash = ${hash} AND deleted_at IS NULL`,
          (rows) => Option.map(Option.fromNullable(rows[0]), toRecord)
        )
    }
    return sqlErrorsAreDefects<SandboxStoreShape>(store)
  })
)

/** Fails a transaction, rolling it back, when one of its compare-and-sets is lost. */
class CasLost extends Data.TaggedError("CasLost") {}

const conflicted = <A, E, R>(effect: Effect.Effect<A, E | CasLost, R>): Effect.Effect<A | Activation, E, R> =>
  Effect.catchIf(
    effect,
    (error): error is CasLost => error instanceof CasLost,
    () => Effect.succeed<Activation>({ _tag: "Conflict" })
  ) as Effect.Effect<A | Activation, E, R>
