import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type {
  ConversationError,
  ConversationId,
  ConversationPatch,
  ConversationRecord,
  ConversationReport,
  ConversationSortOrder,
  EventBody,
  StoredEvent
} from "../domain/Conversation.js"
import type { UserId } from "../domain/Identity.js"
import type { SandboxId } from "../domain/Sandbox.js"

/** The filters of a conversation search and count (SPEC §8); each one given narrows the result. */
export interface ConversationFilters {
  /** Case-sensitive substring of the title; a conversation without a title never matches. */
  readonly titleContains: Option.Option<string>
  readonly createdAtGte: Option.Option<DateTime.Utc>
  readonly createdAtLt: Option.Option<DateTime.Utc>
  readonly updatedAtGte: Option.Option<DateTime.Utc>
  readonly updatedAtLt: Option.Option<DateTime.Utc>
  readonly sandboxId: Option.Option<SandboxId>
}

/**
 * A row's position in an order: its sort value (epoch milliseconds for the date orders, the title
 * for the title orders) and its id, which breaks ties.
 */
export type ConversationSortKey = readonly [value: number | string | null, id: string]

export const isTitleOrder = (order: ConversationSortOrder): order is "TITLE" | "TITLE_DESC" =>
  order === "TITLE" || order === "TITLE_DESC"

export const isDescending = (order: ConversationSortOrder): boolean => order.endsWith("_DESC")

export const sortKeyOf = (order: ConversationSortOrder, record: ConversationRecord): ConversationSortKey => {
  switch (order) {
    case "CREATED_AT":
    case "CREATED_AT_DESC":
      return [record.created_at.epochMillis, record.id]
    case "UPDATED_AT":
    case "UPDATED_AT_DESC":
      return [record.updated_at.epochMillis, record.id]
    case "TITLE":
    case "TITLE_DESC":
      return [record.title, record.id]
  }
}

export interface ConversationSearch {
  readonly userId: UserId
  readonly filters: ConversationFilters
  readonly order: ConversationSortOrder
  /** Rows strictly after this position in `order` (a key of that order). */
  readonly after: Option.Option<ConversationSortKey>
  readonly limit: number
}

/** A write an agent server asked for, on a conversation that must be its sandbox's. */
export type SandboxWrite<A> =
  | { readonly _tag: "Written"; readonly value: A }
  | { readonly _tag: "NotFound" }
  | { readonly _tag: "OtherSandbox" }

export interface NewEvent {
  readonly kind: string
  readonly event: EventBody
}

/**
 * Conversations and their events (SPEC §8, §9). Conversations are created by start tasks (see
 * `StartTaskStore`), or in bulk here. Searches order titles and ids by code point (`COLLATE "C"`);
 * a conversation without a title sorts after every title (last in TITLE, first in TITLE_DESC, each
 * order the exact reverse of the other). Every write sets `updated_at`. Storage failures are defects.
 */
export interface ConversationStoreShape {
  /** Stores conversations as they are, in one step (imports, tests). */
  readonly insertMany: (records: ReadonlyArray<ConversationRecord>) => Effect.Effect<void>
  readonly find: (id: ConversationId) => Effect.Effect<Option.Option<ConversationRecord>>
  readonly search: (query: ConversationSearch) => Effect.Effect<ReadonlyArray<ConversationRecord>>
  readonly count: (query: { readonly userId: UserId; readonly filters: ConversationFilters }) => Effect.Effect<number>
  /** Applies the owner's patch; none when the user has no such conversation. */
  readonly update: (
    userId: UserId,
    id: ConversationId,
    patch: ConversationPatch
  ) => Effect.Effect<Option.Option<ConversationRecord>>
  /** Records what the sandbox's agent server reports of one of its conversations. */
  readonly report: (
    sandboxId: SandboxId,
    id: ConversationId,
    report: ConversationReport
  ) => Effect.Effect<SandboxWrite<ConversationRecord>>
  /**
   * Appends a batch of events to one of the sandbox's conversations, numbered on from its last
   * event in one atomic step (concurrent batches never interleave or share numbers). With an
   * error, the conversation's `execution_status` becomes `error` and its `error` that one.
   */
  readonly appendEvents: (
    sandboxId: SandboxId,
    id: ConversationId,
    events: ReadonlyArray<NewEvent>,
    error: Option.Option<ConversationError>
  ) => Effect.Effect<SandboxWrite<ReadonlyArray<StoredEvent>>>
  /** The conversation's events in order, after a sequence number. */
  readonly listEvents: (
    id: ConversationId,
    after: Option.Option<number>,
    limit: number
  ) => Effect.Effect<ReadonlyArray<StoredEvent>>
}

export class ConversationStore extends Context.Tag("hangar/ConversationStore")<ConversationStore, ConversationStoreShape>() {}
