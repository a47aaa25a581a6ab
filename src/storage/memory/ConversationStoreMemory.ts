import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { ConversationRecord, type ConversationSortOrder, StoredEvent } from "../../domain/Conversation.js"
import {
  type ConversationFilters,
  type ConversationSortKey,
  ConversationStore,
  type ConversationStoreShape,
  isDescending,
  sortKeyOf,
  type SandboxWrite
} from "../ConversationStore.js"
import { compareCodePoints } from "./Collation.js"
import { MemoryTables } from "./MemoryTables.js"

const within = (at: DateTime.Utc, gte: Option.Option<DateTime.Utc>, lt: Option.Option<DateTime.Utc>) =>
  (Option.isNone(gte) || at.epochMillis >= gte.value.epochMillis) &&
  (Option.isNone(lt) || at.epochMillis < lt.value.epochMillis)

export const matchesFilters = (filters: ConversationFilters) => (record: ConversationRecord): boolean =>
  (Option.isNone(filters.titleContains) || (record.title !== null && record.title.includes(filters.titleContains.value))) &&
  within(record.created_at, filters.createdAtGte, filters.createdAtLt) &&
  within(record.updated_at, filters.updatedAtGte, filters.updatedAtLt) &&
  (Option.isNone(filters.sandboxId) || record.sandbox_id === filters.sandboxId.value)

/** A missing title sorts after every title, as Postgres sorts NULL in ascending order. */
const compareValues = (a: number | string | null, b: number | string | null): number => {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1
  return typeof a === "number" ? a - (b as number) : compareCodePoints(a, b as string)
}

/** The order of sort keys: ascending, or its exact reverse. */
export const compareKeys = (order: ConversationSortOrder) => (a: ConversationSortKey, b: ConversationSortKey): number => {
  const ascending = compareValues(a[0], b[0]) || compareCodePoints(a[1], b[1])
  return isDescending(order) ? -ascending : ascending
}

/**
 * The `limit` smallest items offered, in order: a page out of thousands of rows without sorting
 * them all (most rows are turned away by one comparison with the largest kept).
 */
class Smallest<A> {
  private readonly kept: Array<readonly [ConversationSortKey, A]> = []
  constructor(
    private readonly limit: number,
    private readonly compare: (a: ConversationSortKey, b: ConversationSortKey) => number
  ) {}

  offer(key: ConversationSortKey, item: A) {
    const { compare, kept, limit } = this
    if (kept.length === limit && (limit === 0 || compare(key, kept[limit - 1][0]) >= 0)) return
    let low = 0
    let high = kept.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (compare(kept[middle][0], key) <= 0) low = middle + 1
      else high = middle
    }
    kept.splice(low, 0, [key, item])
    if (kept.length > limit) kept.pop()
  }

  items(): Array<A> {
    return this.kept.map(([, item]) => item)
  }
}

/** Volatile conversation storage. Each method runs synchronously, so each is atomic. */
export const ConversationStoreMemory = Layer.effect(
  ConversationStore,
  Effect.map(MemoryTables, ({ conversationEvents, conversations }): ConversationStoreShape => {
    const save = (record: ConversationRecord, changes: Partial<ConversationRecord>) => {
      const updated = ConversationRecord.make({
        ...record,
        ...changes,
        updated_at: DateTime.unsafeNow()
      })
      conversations.set(updated.id, updated)
      return updated
    }

    const ofSandbox = <A>(
      sandboxId: ConversationRecord["sandbox_id"],
      id: ConversationRecord["id"],
      write: (record: ConversationRecord) => A
    ): SandboxWrite<A> => {
      const record = conversations.get(id)
      if (!record) return { _tag: "NotFound" }
      if (record.sandbox_id !== sandboxId) return { _tag: "OtherSandbox" }
      return { _tag: "Written", value: write(record) }
    }

    return {
      insertMany: (records) => Effect.sync(() => records.forEach((record) => conversations.set(record.id, record))),
      find: (id) => Effect.sync(() => Option.fromNullable(conversations.get(id))),
      search: ({ after, filters, limit, order, userId }) =>
        Effect.sync(() => {
          const compare = compareKeys(order)
          const matches = matchesFilters(filters)
          const page = new Smallest<ConversationRecord>(limit, compare)
          for (const record of conversations.values()) {
            if (record.created_by_user_id !== userId || !matches(record)) continue
            const key = sortKeyOf(order, record)
            if (Option.isNone(after) || compare(after.value, key) < 0) page.offer(key, record)
          }
          return page.items()
        }),
      count: ({ filters, userId }) =>
        Effect.sync(() => {
          const matches = matchesFilters(filters)
          let count = 0
          for (const record of conversations.values()) {
            if (record.created_by_user_id === userId && matches(record)) count++
          }
          return count
        }),
      update: (userId, id, patch) =>
        Effect.sync(() => {
          const record = conversations.get(id)
          if (!record || record.created_by_user_id !== userId) return Option.none()
          return Option.some(Object.keys(patch).length === 0 ? record : save(record, patch))
        }),
      report: (sandboxId, id, report) => Effect.sync(() => ofSandbox(sandboxId, id, (record) => save(record, report))),
      appendEvents: (sandboxId, id, events, error) =>
        Effect.sync(() =>
          ofSandbox(sandboxId, id, (record) => {
            const receivedAt = DateTime.unsafeNow()
            const stored = events.map(({ event, kind }, index) =>
              StoredEvent.make({ conversation_id: id, sequence: record.event_count + index + 1, kind, event, received_at: receivedAt })
            )
            conversationEvents.set(id, [...(conversationEvents.get(id) ?? []), ...stored])
            save(record, {
              event_count: record.event_count + events.length,
              ...(Option.isSome(error) ? { execution_status: "error" as const, error: error.value } : {})
            })
            return stored
          })
        ),
      listEvents: (id, after, limit) =>
        Effect.sync(() =>
          (conversationEvents.get(id) ?? [])
            .filter((event) => Option.isNone(after) || event.sequence > after.value)
            .slice(0, limit)
        )
    }
  })
)
