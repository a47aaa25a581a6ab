import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Forbidden, NotFound, Unauthorized } from "../api/Errors.js"
import { pageOf } from "../api/Pagination.js"
import {
  type ConversationError,
  type ConversationId,
  type ConversationPatch,
  type ConversationRecord,
  type ConversationReport,
  type ConversationSortOrder,
  ERROR_EVENT_KIND,
  type EventBody,
  type StoredEvent
} from "../domain/Conversation.js"
import type { UserId } from "../domain/Identity.js"
import type { SandboxId, SandboxRecord } from "../domain/Sandbox.js"
import { hashSecret } from "../domain/Secrets.js"
import {
  type ConversationFilters,
  type ConversationSortKey,
  ConversationStore,
  type SandboxWrite,
  sortKeyOf
} from "../storage/ConversationStore.js"
import { SandboxStore } from "../storage/SandboxStore.js"
import { Sandboxes } from "./Sandboxes.js"

/** A conversation with its sandbox as its owner may see it (none once the sandbox is gone). */
export interface ConversationView {
  readonly conversation: ConversationRecord
  readonly sandbox: Option.Option<SandboxRecord>
}

export interface ConversationPage {
  readonly items: ReadonlyArray<ConversationView>
  readonly next: Option.Option<ConversationSortKey>
}

export interface EventPage {
  readonly items: ReadonlyArray<StoredEvent>
  readonly next: Option.Option<number>
}

/**
 * Conversations as their owners see them, and as their sandboxes' agent servers report on them
 * (SPEC §8, §9). A user sees only their own conversations (404 for others'); an agent server
 * writes only to its own sandbox's conversations (403 for another's, 404 for unknown ones: Hangar
 * records only the conversations it started).
 */
export interface ConversationsShape {
  /** In request order; none for ids that are unknown or not the caller's. */
  readonly getMany: (userId: UserId, ids: ReadonlyArray<ConversationId>) => Effect.Effect<ReadonlyArray<Option.Option<ConversationView>>>
  readonly search: (
    userId: UserId,
    query: {
      readonly filters: ConversationFilters
      readonly order: ConversationSortOrder
      readonly after: Option.Option<ConversationSortKey>
      readonly limit: number
    }
  ) => Effect.Effect<ConversationPage>
  readonly count: (userId: UserId, filters: ConversationFilters) => Effect.Effect<number>
  readonly update: (userId: UserId, id: ConversationId, patch: ConversationPatch) => Effect.Effect<ConversationView, NotFound>
  readonly events: (
    userId: UserId,
    id: ConversationId,
    query: { readonly after: Option.Option<number>; readonly limit: number }
  ) => Effect.Effect<EventPage, NotFound>
  /** The sandbox whose agent server presents this session key. */
  readonly sandboxOfAgent: (sessionKey: string) => Effect.Effect<SandboxRecord, Unauthorized>
  readonly report: (sandbox: SandboxRecord, id: ConversationId, report: ConversationReport) => Effect.Effect<void, NotFound | Forbidden>
  /** Stores a batch of events in order; a `ConversationErrorEvent` among them marks the conversation failed. */
  readonly appendEvents: (
    sandbox: SandboxRecord,
    id: ConversationId,
    events: ReadonlyArray<EventBody & { readonly kind: string }>
  ) => Effect.Effect<void, NotFound | Forbidden>
}

export class Conversations extends Context.Tag("hangar/Conversations")<Conversations, ConversationsShape>() {}

const notFound = new NotFound({ detail: "Conversation not found" })

/** The last error event of a batch, as the conversation's error. */
const lastError = (events: ReadonlyArray<EventBody & { readonly kind: string }>): Option.Option<ConversationError> =>
  Option.map(Arr.findLast(events, (event) => event.kind === ERROR_EVENT_KIND), (event) => ({
    code: String(event.code),
    detail: String(event.detail),
    classification: typeof event.classification === "string" ? event.classification : null
  }))

const written = <A>(outcome: SandboxWrite<A>): Effect.Effect<A, NotFound | Forbidden> => {
  switch (outcome._tag) {
    case "Written":
      return Effect.succeed(outcome.value)
    case "NotFound":
      return Effect.fail(notFound)
    case "OtherSandbox":
      return Effect.fail(new Forbidden({ detail: "The conversation belongs to another sandbox" }))
  }
}

export const ConversationsLive = Layer.effect(
  Conversations,
  Effect.gen(function*() {
    const store = yield* ConversationStore
    const sandboxStore = yield* SandboxStore
    const sandboxes = yield* Sandboxes

    /** The conversations with their sandboxes, each sandbox read once. */
    const views = (userId: UserId, records: ReadonlyArray<ConversationRecord>) =>
      Effect.gen(function*() {
        const ids = Arr.dedupe(records.map((record) => record.sandbox_id))
        const found = yield* sandboxes.getMany(userId, ids)
        const byId = new Map<SandboxId, SandboxRecord>(found.flatMap(Option.toArray).map((sandbox) => [sandbox.id, sandbox]))
        return records.map((conversation): ConversationView => ({
          conversation,
          sandbox: Option.fromNullable(byId.get(conversation.sandbox_id))
        }))
      })

    const owned = (userId: UserId, id: ConversationId) =>
      Effect.flatMap(store.find(id), (found) =>
        Option.isSome(found) && found.value.created_by_user_id === userId ? Effect.succeed(found.value) : Effect.fail(notFound))

    return {
      getMany: (userId, ids) =>
        Effect.gen(function*() {
          const found = yield* Effect.forEach(ids, (id) => Effect.option(owned(userId, id)), { concurrency: 10 })
          const viewed = yield* views(userId, found.flatMap(Option.toArray))
          const byId = new Map(viewed.map((view) => [view.conversation.id, view]))
          return ids.map((id) => Option.fromNullable(byId.get(id)))
        }),
      search: (userId, { after, filters, limit, order }) =>
        Effect.gen(function*() {
          const rows = yield* store.search({ userId, filters, order, after, limit: limit + 1 })
          const page = pageOf(rows, limit, (last) => sortKeyOf(order, last))
          return { items: yield* views(userId, page.items), next: page.next }
        }),
      count: (userId, filters) => store.count({ userId, filters }),
      update: (userId, id, patch) =>
        Effect.gen(function*() {
          const updated = yield* store.update(userId, id, patch)
          if (Option.isNone(updated)) return yield* notFound
          const [view] = yield* views(userId, [updated.value])
          return view
        }),
      events: (userId, id, { after, limit }) =>
        Effect.gen(function*() {
          yield* owned(userId, id)
          const rows = yield* store.listEvents(id, after, limit + 1)
          return pageOf(rows, limit, (last) => last.sequence)
        }),
      sandboxOfAgent: (sessionKey) =>
        Effect.flatMap(
          sessionKey === "" ? Effect.succeed(Option.none()) : sandboxStore.findBySessionKeyHash(hashSecret(sessionKey)),
          Option.match({
            onNone: () => Effect.fail(new Unauthorized({ detail: "Missing or unknown X-Session-API-Key" })),
            onSome: Effect.succeed
          })
        ),
      report: (sandbox, id, report) => Effect.asVoid(Effect.flatMap(store.report(sandbox.id, id, report), written)),
      appendEvents: (sandbox, id, events) =>
        Effect.asVoid(Effect.flatMap(
          store.appendEvents(sandbox.id, id, events.map((event) => ({ kind: event.kind, event })), lastError(events)),
          written
        ))
    }
  })
)
