import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { type SandboxId, type SandboxPatch, SandboxRecord } from "../../domain/Sandbox.js"
import {
  type Activation,
  decideActivation,
  pausedForLimit,
  type SandboxLimit,
  type SandboxSortKey,
  SandboxStore,
  type SandboxStoreShape
} from "../SandboxStore.js"
import { MemoryTables } from "./MemoryTables.js"

const sortKey = (record: SandboxRecord): SandboxSortKey => [record.created_at.epochMillis, record.id]

/** Newest first: created_at descending, then id descending (code-unit order, as `COLLATE "C"`). */
const newestFirst = (a: SandboxSortKey, b: SandboxSortKey) =>
  b[0] - a[0] || (a[1] < b[1] ? 1 : a[1] > b[1] ? -1 : 0)

/** Volatile sandbox storage. Each method runs synchronously, so each is atomic, limits included. */
export const SandboxStoreMemory = Layer.effect(SandboxStore, Effect.map(MemoryTables, ({ sandboxes }): SandboxStoreShape => {
  const write = (record: SandboxRecord, patch: SandboxPatch) => {
    const updated = SandboxRecord.make({
      ...record,
      ...patch,
      version: record.version + 1,
      updated_at: DateTime.unsafeNow()
    })
    sandboxes.set(updated.id, updated)
    return updated
  }

  /** Decides for one more active sandbox of the user and gives up the oldest one if the policy says so. */
  const makeRoom = (userId: SandboxRecord["created_by_user_id"], except: SandboxId, limit: SandboxLimit) => {
    const others = Array.from(sandboxes.values()).filter((r) => r.created_by_user_id === userId && r.id !== except)
    const decision = decideActivation(others, limit, (a, b) => a.epochMillis - b.epochMillis)
    if (decision._tag === "LimitReached") return decision
    return { _tag: "Allowed" as const, paused: Option.map(decision.pause, (id) => write(sandboxes.get(id)!, pausedForLimit)) }
  }

  return {
    insert: (record, limit) =>
      Effect.sync((): Activation => {
        const room = makeRoom(record.created_by_user_id, record.id, limit)
        if (room._tag === "LimitReached") return room
        sandboxes.set(record.id, record)
        return { _tag: "Activated", record, paused: room.paused }
      }),
    activate: (id, version, patch, limit) =>
      Effect.sync((): Activation => {
        const record = sandboxes.get(id)
        if (!record || record.version !== version) return { _tag: "Conflict" }
        const room = makeRoom(record.created_by_user_id, id, limit)
        if (room._tag === "LimitReached") return room
        return { _tag: "Activated", record: write(record, patch), paused: room.paused }
      }),
    update: (id, version, patch) =>
      Effect.sync(() => {
        const record = sandboxes.get(id)
        return record && record.version === version ? Option.some(write(record, patch)) : Option.none()
      }),
    find: (id) => Effect.sync(() => Option.fromNullable(sandboxes.get(id))),
    search: ({ after, limit, status, userId }) =>
      Effect.sync(() =>
        Array.from(sandboxes.values())
          .filter((record) =>
            record.created_by_user_id === userId &&
            record.desired_state !== "DELETED" &&
            (Option.isNone(status) || record.status === status.value) &&
            (Option.isNone(after) || newestFirst(after.value, sortKey(record)) < 0)
          )
          .sort((a, b) => newestFirst(sortKey(a), sortKey(b)))
          .slice(0, limit)
      ),
    listForInstance: (instanceId) =>
      Effect.sync(() =>
        Array.from(sandboxes.values()).filter((record) => record.instance_id === instanceId && record.deleted_at === null)
      ),
    findBySessionKeyHash: (hash) =>
      Effect.sync(() =>
        Option.fromNullable(
          Array.from(sandboxes.values()).find((record) => record.session_key_hash === hash && record.deleted_at === null)
        )
      )
  }
}))
