import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { type StartTaskId, type StartTaskPatch, StartTaskRecord } from "../../domain/Conversation.js"
import { StartTaskStore, type StartTaskStoreShape, type TaskCreation } from "../StartTaskStore.js"
import { conversationRow } from "./ConversationRows.js"
import { sqlErrorsAreDefects, type WithSqlErrors } from "./Defects.js"
import { fromRow, toDate } from "./Rows.js"

const toTask = fromRow(StartTaskRecord)

const UNFINISHED = ["WORKING", "WAITING_FOR_SANDBOX", "STARTING_CONVERSATION"]

export const StartTaskStorePg = Layer.effect(
  StartTaskStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const first = (rows: ReadonlyArray<Record<string, unknown>>) => Option.map(Option.fromNullable(rows[0]), toTask)

    /** Inside the caller's transaction: the task, locked, if it is unfinished. */
    const lockUnfinished = (id: StartTaskId) =>
      Effect.map(
        sql`SELECT * FROM conversation_start_tasks WHERE id = ${id} AND status IN ${sql.in(UNFINISHED)} FOR UPDATE`,
        first
      )

    const setColumns = (id: StartTaskId, columns: Record<string, unknown>) =>
      Effect.map(
        sql`UPDATE conversation_start_tasks SET ${sql.update({ ...columns, updated_at: new Date() })}
            WHERE id = ${id} RETURNING *`,
        first
      )

    /**
     * One guarded upsert: it adds one to the day's count only while the count is under the limit,
     * and returns no row otherwise. Concurrent reservations queue on the row's lock and each sees
     * the count its predecessor left, on every replica.
     */
    const reserve = (userId: string, day: string, limit: Option.Option<number>) =>
      Option.match(limit, {
        onNone: () =>
          sql<{ used: number }>`
            INSERT INTO daily_conversation_usage AS usage (user_id, day, used) VALUES (${userId}, ${day}, 1)
            ON CONFLICT (user_id, day) DO UPDATE SET used = usage.used + 1
            RETURNING used`,
        onSome: (limit) =>
          sql<{ used: number }>`
            INSERT INTO daily_conversation_usage AS usage (user_id, day, used)
            SELECT ${userId}, ${day}, 1 WHERE ${limit}::integer > 0
            ON CONFLICT (user_id, day) DO UPDATE SET used = usage.used + 1 WHERE usage.used < ${limit}::integer
            RETURNING used`
      })

    const usage = (userId: string, day: string) =>
      Effect.map(
        sql<{ used: number }>`SELECT used FROM daily_conversation_usage WHERE user_id = ${userId} AND day = ${day}`,
        (rows) => rows[0]?.used ?? 0
      )

    const store: WithSqlErrors<StartTaskStoreShape> = {
      create: (task, limit) =>
        sql.withTransaction(Effect.gen(function*() {
          const reserved = yield* reserve(task.created_by_user_id, task.quota_day, limit)
          if (reserved.length === 0) {
            return { _tag: "LimitReached", used: yield* usage(task.created_by_user_id, task.quota_day) } satisfies TaskCreation
          }
          const rows = yield* sql`INSERT INTO conversation_start_tasks ${
            sql.insert({ ...task, created_at: toDate(task.created_at), updated_at: toDate(task.updated_at) })
          } RETURNING *`
          return { _tag: "Created", task: toTask(rows[0]) } satisfies TaskCreation
        })),
      find: (id) => Effect.map(sql`SELECT * FROM conversation_start_tasks WHERE id = ${id}`, first),
      search: ({ after, limit, userId }) =>
        Effect.map(
          sql`SELECT * FROM conversation_start_tasks
              WHERE ${
            sql.and([
              sql`created_by_user_id = ${userId}`,
              ...Option.toArray(Option.map(after, ([at, id]) => sql`(created_at, id) < (${new Date(at)}, ${id})`))
            ])
          }
              ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
          (rows) => rows.map(toTask)
        ),
      advance: (id, patch: StartTaskPatch) =>
        Effect.map(
          sql`UPDATE conversation_start_tasks SET ${sql.update({ ...patch, updated_at: new Date() })}
              WHERE id = ${id} AND status IN ${sql.in(UNFINISHED)} RETURNING *`,
          first
        ),
      recordConversation: (id, conversation, agentServerUrl) =>
        sql.withTransaction(Effect.gen(function*() {
          const task = yield* lockUnfinished(id)
          if (Option.isNone(task)) return task
          yield* sql`INSERT INTO conversations ${sql.insert(conversationRow(conversation))}`
          return yield* setColumns(id, {
            status: "STARTING_CONVERSATION",
            app_conversation_id: conversation.id,
            agent_server_url: agentServerUrl
          })
        })),
      complete: (id) =>
        Effect.map(
          sql`UPDATE conversation_start_tasks SET status = 'READY', updated_at = ${new Date()}
              WHERE id = ${id} AND status = 'STARTING_CONVERSATION' RETURNING *`,
          first
        ),
      fail: (id, detail) =>
        sql.withTransaction(Effect.gen(function*() {
          const found = yield* lockUnfinished(id)
          if (Option.isNone(found)) return found
          const task = found.value
          yield* sql`UPDATE daily_conversation_usage SET used = GREATEST(used - 1, 0)
                     WHERE user_id = ${task.created_by_user_id} AND day = ${task.quota_day}`
          if (task.app_conversation_id !== null) {
            yield* sql`DELETE FROM conversations WHERE id = ${task.app_conversation_id}`
          }
          return yield* setColumns(id, { status: "ERROR", detail, app_conversation_id: null })
        })),
      listUnfinished: (instanceId) =>
        Effect.map(
          sql`SELECT * FROM conversation_start_tasks
              WHERE instance_id = ${instanceId} AND status IN ${sql.in(UNFINISHED)} ORDER BY created_at, id`,
          (rows) => rows.map(toTask)
        ),
      usage,
      limitOverrides: (userId, orgId) =>
        Effect.map(
          sql<{ scope: string; daily_limit: number }>`
            SELECT scope, daily_limit FROM daily_conversation_limits
            WHERE (scope = 'User' AND scope_id = ${userId})
               OR (scope = 'Organization' AND scope_id = ${Option.getOrNull(orgId)})`,
          (rows) => ({
            user: Option.fromNullable(rows.find((row) => row.scope === "User")?.daily_limit),
            organization: Option.fromNullable(rows.find((row) => row.scope === "Organization")?.daily_limit)
          })
        ),
      setLimitOverride: (scope, limit) =>
        Option.match(limit, {
          onNone: () => sql`DELETE FROM daily_conversation_limits WHERE scope = ${scope._tag} AND scope_id = ${scope.id}`,
          onSome: (limit) =>
            sql`INSERT INTO daily_conversation_limits (scope, scope_id, daily_limit) VALUES (${scope._tag}, ${scope.id}, ${limit})
                ON CONFLICT (scope, scope_id) DO UPDATE SET daily_limit = EXCLUDED.daily_limit`
        }).pipe(Effect.asVoid)
    }
    return sqlErrorsAreDefects<StartTaskStoreShape>(store)
  })
)
