import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { isFinished, type StartTaskId, StartTaskRecord } from "../../domain/Conversation.js"
import {
  type LimitScope,
  StartTaskStore,
  type StartTaskSortKey,
  type StartTaskStoreShape,
  type TaskCreation
} from "../StartTaskStore.js"
import { compareCodePoints } from "./Collation.js"
import { MemoryTables, scopedKey } from "./MemoryTables.js"

const sortKey = (task: StartTaskRecord): StartTaskSortKey => [task.created_at.epochMillis, task.id]

const newestFirst = (a: StartTaskSortKey, b: StartTaskSortKey) => b[0] - a[0] || compareCodePoints(b[1], a[1])

const limitKey = (scope: LimitScope) => scopedKey(scope._tag, scope.id)

/** Volatile start tasks and quota. Each method runs synchronously, so each is atomic. */
export const StartTaskStoreMemory = Layer.effect(
  StartTaskStore,
  Effect.map(MemoryTables, (tables): StartTaskStoreShape => {
    const { conversationEvents, conversationLimits, conversations, conversationUsage, startTasks } = tables

    const write = (task: StartTaskRecord, changes: Partial<StartTaskRecord>) => {
      const updated = StartTaskRecord.make({ ...task, ...changes, updated_at: DateTime.unsafeNow() })
      startTasks.set(updated.id, updated)
      return updated
    }

    const unfinished = (id: StartTaskId) => {
      const task = startTasks.get(id)
      return task && !isFinished(task.status) ? task : undefined
    }

    return {
      create: (task, limit) =>
        Effect.sync((): TaskCreation => {
          const key = scopedKey(task.created_by_user_id, task.quota_day)
          const used = conversationUsage.get(key) ?? 0
          if (Option.isSome(limit) && used >= limit.value) return { _tag: "LimitReached", used }
          conversationUsage.set(key, used + 1)
          startTasks.set(task.id, task)
          return { _tag: "Created", task }
        }),
      find: (id) => Effect.sync(() => Option.fromNullable(startTasks.get(id))),
      search: ({ after, limit, userId }) =>
        Effect.sync(() =>
          Array.from(startTasks.values())
            .filter((task) =>
              task.created_by_user_id === userId && (Option.isNone(after) || newestFirst(after.value, sortKey(task)) < 0)
            )
            .sort((a, b) => newestFirst(sortKey(a), sortKey(b)))
            .slice(0, limit)
        ),
      advance: (id, patch) =>
        Effect.sync(() => {
          const task = unfinished(id)
          return task ? Option.some(write(task, patch)) : Option.none()
        }),
      recordConversation: (id, conversation, agentServerUrl) =>
        Effect.sync(() => {
          const task = unfinished(id)
          if (!task) return Option.none()
          conversations.set(conversation.id, conversation)
          return Option.some(write(task, {
            status: "STARTING_CONVERSATION",
            app_conversation_id: conversation.id,
            agent_server_url: agentServerUrl
          }))
        }),
      complete: (id) =>
        Effect.sync(() => {
          const task = startTasks.get(id)
          return task?.status === "STARTING_CONVERSATION" ? Option.some(write(task, { status: "READY" })) : Option.none()
        }),
      fail: (id, detail) =>
        Effect.sync(() => {
          const task = unfinished(id)
          if (!task) return Option.none()
          const key = scopedKey(task.created_by_user_id, task.quota_day)
          conversationUsage.set(key, Math.max((conversationUsage.get(key) ?? 0) - 1, 0))
          if (task.app_conversation_id !== null) {
            conversations.delete(task.app_conversation_id)
            conversationEvents.delete(task.app_conversation_id)
          }
          return Option.some(write(task, { status: "ERROR", detail, app_conversation_id: null }))
        }),
      listUnfinished: (instanceId) =>
        Effect.sync(() =>
          Array.from(startTasks.values()).filter((task) => task.instance_id === instanceId && !isFinished(task.status))
        ),
      usage: (userId, day) => Effect.sync(() => conversationUsage.get(scopedKey(userId, day)) ?? 0),
      limitOverrides: (userId, orgId) =>
        Effect.sync(() => ({
          user: Option.fromNullable(conversationLimits.get(limitKey({ _tag: "User", id: userId }))),
          organization: Option.flatMap(orgId, (id) =>
            Option.fromNullable(conversationLimits.get(limitKey({ _tag: "Organization", id }))))
        })),
      setLimitOverride: (scope, limit) =>
        Effect.sync(() => {
          if (Option.isSome(limit)) conversationLimits.set(limitKey(scope), limit.value)
          else conversationLimits.delete(limitKey(scope))
        })
    }
  })
)
