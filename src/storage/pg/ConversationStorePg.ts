import * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import {
  type ConversationId,
  type ConversationPatch,
  type ConversationRecord,
  type ConversationSortOrder,
  StoredEvent
} from "../../domain/Conversation.js"
import type { UserId } from "../../domain/Identity.js"
import type { SandboxId } from "../../domain/Sandbox.js"
import {
  type ConversationFilters,
  type ConversationSortKey,
  ConversationStore,
  type ConversationStoreShape,
  type SandboxWrite
} from "../ConversationStore.js"
import { conversationRow, toConversation } from "./ConversationRows.js"
import { sqlErrorsAreDefects, type WithSqlErrors } from "./Defects.js"
import { fromRow } from "./Rows.js"

const toEvent = fromRow(StoredEvent)

/** Rows per INSERT: well under Postgres's 65535 parameters for the widest row. */
const INSERT_CHUNK = 1000

export const ConversationStorePg = Layer.effect(
  ConversationStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const orderBy: Record<ConversationSortOrder, Statement.Fragment> = {
      CREATED_AT: sql.literal("created_at, id"),
      CREATED_AT_DESC: sql.literal("created_at DESC, id DESC"),
      UPDATED_AT: sql.literal("updated_at, id"),
      UPDATED_AT_DESC: sql.literal("updated_at DESC, id DESC"),
      // The expressions of the title index, which puts a missing title after every title.
      TITLE: sql.literal("(title IS NULL), COALESCE(title, ''), id"),
      TITLE_DESC: sql.literal("(title IS NULL) DESC, COALESCE(title, '') DESC, id DESC")
    }

    const filtersOf = (filters: ConversationFilters): Array<Statement.Fragment> => [
      ...Option.toArray(Option.map(filters.titleContains, (part) => sql`strpos(title, ${part}) > 0`)),
      ...Option.toArray(Option.map(filters.createdAtGte, (at) => sql`created_at >= ${DateTime.toDateUtc(at)}`)),
      ...Option.toArray(Option.map(filters.createdAtLt, (at) => sql`created_at < ${DateTime.toDateUtc(at)}`)),
      ...Option.toArray(Option.map(filters.updatedAtGte, (at) => sql`updated_at >= ${DateTime.toDateUtc(at)}`)),
      ...Option.toArray(Option.map(filters.updatedAtLt, (at) => sql`updated_at < ${DateTime.toDateUtc(at)}`)),
      ...Option.toArray(Option.map(filters.sandboxId, (id) => sql`sandbox_id = ${id}`))
    ]

    /** Rows strictly after the key in the order: one row comparison, which the order's index answers. */
    const after = (order: ConversationSortOrder, [value, id]: ConversationSortKey): Statement.Fragment => {
      switch (order) {
        case "CREATED_AT":
          return sql`(created_at, id) > (${new Date(value as number)}, ${id})`
        case "CREATED_AT_DESC":
          return sql`(created_at, id) < (${new Date(value as number)}, ${id})`
        case "UPDATED_AT":
          return sql`(updated_at, id) > (${new Date(value as number)}, ${id})`
        case "UPDATED_AT_DESC":
          return sql`(updated_at, id) < (${new Date(value as number)}, ${id})`
        case "TITLE":
          return sql`((title IS NULL), COALESCE(title, ''), id) > (${value === null}, ${value ?? ""}, ${id})`
        case "TITLE_DESC":
          return sql`((title IS NULL), COALESCE(title, ''), id) < (${value === null}, ${value ?? ""}, ${id})`
      }
    }

    /** Distinguishes why a write guarded by the sandbox touched no row. */
    const refusal = (id: ConversationId) =>
      Effect.map(
        sql`SELECT 1 FROM conversations WHERE id = ${id}`,
        (rows): SandboxWrite<never> => rows.length === 0 ? { _tag: "NotFound" } : { _tag: "OtherSandbox" }
      )

    const ofSandbox = (sandboxId: SandboxId, id: ConversationId) =>
      Effect.map(
        sql`SELECT * FROM conversations WHERE id = ${id}`,
        (rows): SandboxWrite<ConversationRecord> =>
          rows.length === 0
            ? { _tag: "NotFound" }
            : rows[0].sandbox_id !== sandboxId
            ? { _tag: "OtherSandbox" }
            : { _tag: "Written", value: toConversation(rows[0]) }
      )

    const update = (userId: UserId, id: ConversationId, patch: ConversationPatch) => {
      const columns: Record<string, unknown> = {}
      if (patch.title !== undefined) columns.title = patch.title
      if (patch.public !== undefined) columns.public = patch.public
      if (patch.tags !== undefined) columns.tags = JSON.stringify(patch.tags)
      const statement = Object.keys(columns).length === 0
        ? sql`SELECT * FROM conversations WHERE id = ${id} AND created_by_user_id = ${userId}`
        : sql`UPDATE conversations SET ${sql.update({ ...columns, updated_at: new Date() })}
              WHERE id = ${id} AND created_by_user_id = ${userId} RETURNING *`
      return Effect.map(statement, (rows) => Option.map(Option.fromNullable(rows[0]), toConversation))
    }

    const store: WithSqlErrors<ConversationStoreShape> = {
      insertMany: (records) =>
        sql.withTransaction(Effect.forEach(
          Arr.chunksOf(records, INSERT_CHUNK),
          (chunk) => sql`INSERT INTO conversations ${sql.insert(chunk.map(conversationRow))}`,
          { discard: true }
        )),
      find: (id) =>
        Effect.map(sql`SELECT * FROM conversations WHERE id = ${id}`, (rows) => Option.map(Option.fromNullable(rows[0]), toConversation)),
      search: (query) => {
        const conditions = [
          sql`created_by_user_id = ${query.userId}`,
          ...filtersOf(query.filters),
          ...Option.toArray(Option.map(query.after, (key) => after(query.order, key)))
        ]
        return Effect.map(
          sql`SELECT * FROM conversations WHERE ${sql.and(conditions)} ORDER BY ${orderBy[query.order]} LIMIT ${query.limit}`,
          (rows) => rows.map(toConversation)
        )
      },
      count: ({ filters, userId }) =>
        Effect.map(
          sql<{ count: number }>`SELECT count(*)::integer AS count FROM conversations
            WHERE ${sql.and([sql`created_by_user_id = ${userId}`, ...filtersOf(filters)])}`,
          (rows) => rows[0].count
        ),
      update,
      report: (sandboxId, id, report) => {
        const columns: Record<string, unknown> = {}
        if (report.execution_status !== undefined) columns.execution_status = report.execution_status
        if (report.title !== undefined) columns.title = report.title
        return Effect.flatMap(
          sql`UPDATE conversations SET ${sql.update({ ...columns, updated_at: new Date() })}
              WHERE id = ${id} AND sandbox_id = ${sandboxId} RETURNING *`,
          (rows) =>
            rows.length > 0
              ? Effect.succeed<SandboxWrite<ConversationRecord>>({ _tag: "Written", value: toConversation(rows[0]) })
              : refusal(id)
        )
      },
      appendEvents: (sandboxId, id, events, error) => {
        if (events.length === 0 && Option.isNone(error)) {
          return Effect.map(ofSandbox(sandboxId, id), (outcome) =>
            outcome._tag === "Written" ? { _tag: "Written", value: [] } : outcome)
        }
        return sql.withTransaction(Effect.gen(function*() {
          const receivedAt = new Date()
          const failed = Option.match(error, {
            onNone: () => ({}),
            onSome: (error) => ({ execution_status: "error", error: JSON.stringify(error) })
          })
          // The row lock taken here holds concurrent batches back until this one commits.
          const counted = yield* sql<{ event_count: number }>`
            UPDATE conversations
            SET ${sql.update({ ...failed, updated_at: receivedAt })}, event_count = event_count + ${events.length}
            WHERE id = ${id} AND sandbox_id = ${sandboxId} RETURNING event_count`
          if (counted.length === 0) return yield* refusal(id)
          const first = counted[0].event_count - events.length + 1
          if (events.length === 0) return { _tag: "Written", value: [] } satisfies SandboxWrite<ReadonlyArray<StoredEvent>>
          const rows = yield* Effect.forEach(
            Arr.chunksOf(events.map(({ event, kind }, index) => ({ event, kind, sequence: first + index })), INSERT_CHUNK),
            (chunk) =>
              sql`INSERT INTO conversation_events ${
                sql.insert(chunk.map(({ event, kind, sequence }) => ({
                  conversation_id: id,
                  sequence,
                  kind,
                  event: JSON.stringify(event),
                  received_at: receivedAt
                })))
              } RETURNING *`
          )
          const stored = rows.flat().map(toEvent).sort((a, b) => a.sequence - b.sequence)
          return { _tag: "Written", value: stored } satisfies SandboxWrite<ReadonlyArray<StoredEvent>>
        }))
      },
      listEvents: (id, afterSequence, limit) =>
        Effect.map(
          sql`SELECT * FROM conversation_events
              WHERE conversation_id = ${id} AND sequence > ${Option.getOrElse(afterSequence, () => 0)}
              ORDER BY sequence LIMIT ${limit}`,
          (rows) => rows.map(toEvent)
        )
    }
    return sqlErrorsAreDefects<ConversationStoreShape>(store)
  })
)
