import { expect } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import {
  type ConversationId,
  ConversationRecord,
  type StartTaskId,
  StartTaskRecord
} from "../../src/domain/Conversation.js"
import type { UserId } from "../../src/domain/Identity.js"
import type { SandboxId } from "../../src/domain/Sandbox.js"
import type { ConversationFilters } from "../../src/storage/ConversationStore.js"
import { eventually } from "./Sandboxes.js"
import { call } from "./TestServer.js"

export const newUser = () => `user-${crypto.randomUUID()}` as UserId

export const newConversation = (userId: UserId, overrides: Partial<ConversationRecord> = {}) => {
  const now = DateTime.unsafeNow()
  return ConversationRecord.make({
    id: crypto.randomUUID() as ConversationId,
    created_by_user_id: userId,
    sandbox_id: "sandbox-1" as SandboxId,
    title: null,
    selected_repository: null,
    selected_branch: null,
    git_provider: null,
    trigger: null,
    llm_model: null,
    agent_profile_id: null,
    parent_conversation_id: null,
    tags: {},
    public: false,
    execution_status: null,
    error: null,
    event_count: 0,
    created_at: now,
    updated_at: now,
    ...overrides
  })
}

export const today = () => DateTime.formatIso(DateTime.unsafeNow()).slice(0, 10)

export const newTask = (userId: UserId, overrides: Partial<StartTaskRecord> = {}) => {
  const now = DateTime.unsafeNow()
  return StartTaskRecord.make({
    id: crypto.randomUUID() as StartTaskId,
    created_by_user_id: userId,
    status: "WORKING",
    detail: null,
    app_conversation_id: null,
    sandbox_id: null,
    started_sandbox: false,
    agent_server_url: null,
    instance_id: "instance-a",
    quota_day: today(),
    created_at: now,
    updated_at: now,
    ...overrides
  })
}

/** Code point order, computed independently of the stores: UTF-8 bytes compare in code point order. */
export const byCodePoint = (a: string, b: string) => Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"))

export interface Filters {
  readonly title__contains?: string
  readonly created_at__gte?: number
  readonly created_at__lt?: number
  readonly updated_at__gte?: number
  readonly updated_at__lt?: number
  readonly sandbox_id__eq?: string
}

export type SortOrder = "CREATED_AT" | "CREATED_AT_DESC" | "UPDATED_AT" | "UPDATED_AT_DESC" | "TITLE" | "TITLE_DESC"

export const sortOrders: ReadonlyArray<SortOrder> = ["CREATED_AT", "CREATED_AT_DESC", "UPDATED_AT", "UPDATED_AT_DESC", "TITLE", "TITLE_DESC"]

/**
 * What a search must answer, by brute force: the user's conversations that pass every filter, in
 * the order's sort value then id, a missing title after every title, `_DESC` the exact reverse.
 */
export const expectedIds = (
  records: ReadonlyArray<ConversationRecord>,
  userId: string,
  filters: Filters,
  order: SortOrder
): Array<string> => {
  const ms = (at: DateTime.Utc) => at.epochMillis
  const kept = records.filter((r) =>
    r.created_by_user_id === userId &&
    (filters.title__contains === undefined || (r.title !== null && r.title.includes(filters.title__contains))) &&
    (filters.created_at__gte === undefined || ms(r.created_at) >= filters.created_at__gte) &&
    (filters.created_at__lt === undefined || ms(r.created_at) < filters.created_at__lt) &&
    (filters.updated_at__gte === undefined || ms(r.updated_at) >= filters.updated_at__gte) &&
    (filters.updated_at__lt === undefined || ms(r.updated_at) < filters.updated_at__lt) &&
    (filters.sandbox_id__eq === undefined || r.sandbox_id === filters.sandbox_id__eq)
  )
  const value = (r: ConversationRecord): number | string | null =>
    order.startsWith("CREATED") ? ms(r.created_at) : order.startsWith("UPDATED") ? ms(r.updated_at) : r.title
  const ascending = (a: ConversationRecord, b: ConversationRecord) => {
    const [x, y] = [value(a), value(b)]
    const byValue = x === null || y === null
      ? Number(x === null) - Number(y === null)
      : typeof x === "number"
      ? x - (y as number)
      : byCodePoint(x, y as string)
    return byValue || byCodePoint(a.id, b.id)
  }
  const sign = order.endsWith("_DESC") ? -1 : 1
  return [...kept].sort((a, b) => sign * ascending(a, b)).map((r) => r.id)
}

/** The filters as the store takes them. */
export const storeFilters = (filters: Filters): ConversationFilters => {
  const at = (ms: number | undefined) => Option.map(Option.fromNullable(ms), (value) => DateTime.unsafeMake(value))
  return {
    titleContains: Option.fromNullable(filters.title__contains),
    createdAtGte: at(filters.created_at__gte),
    createdAtLt: at(filters.created_at__lt),
    updatedAtGte: at(filters.updated_at__gte),
    updatedAtLt: at(filters.updated_at__lt),
    sandboxId: Option.fromNullable(filters.sandbox_id__eq as SandboxId | undefined)
  }
}

export const startConversation = (token: string, body: Record<string, unknown> = {}) =>
  call("POST", "/api/v1/app-conversations", { token, body })

export const getTask = (token: string, id: string) =>
  Effect.map(call("GET", `/api/v1/app-conversations/start-tasks?id=${encodeURIComponent(id)}`, { token }), ({ body, status }) => {
    expect(status, JSON.stringify(body)).toBe(200)
    return body[0] as any
  })

/** Polls a start task until it is finished (or at `status`), and expects it at `status`. */
export const untilTask = (token: string, id: string, status: string, timeoutMs = 15_000) =>
  Effect.map(
    eventually(
      getTask(token, id),
      (task) => task?.status === status || task?.status === "READY" || task?.status === "ERROR",
      timeoutMs,
      `start task ${id} to be ${status}`
    ),
    (task) => {
      expect(task.status, JSON.stringify(task)).toBe(status)
      return task
    }
  )

export const conversation = (token: string, id: string) =>
  Effect.map(call("GET", `/api/v1/app-conversations?id=${encodeURIComponent(id)}`, { token }), ({ body, status }) => {
    expect(status, JSON.stringify(body)).toBe(200)
    return body[0] as any
  })

export const quotaStatus = (token: string) =>
  Effect.map(call("GET", "/api/quota/status", { token }), ({ body, status }) => {
    expect(status, JSON.stringify(body)).toBe(200)
    return body as any
  })
