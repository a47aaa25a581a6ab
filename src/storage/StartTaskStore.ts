import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { ConversationRecord, StartTaskId, StartTaskPatch, StartTaskRecord } from "../domain/Conversation.js"
import type { OrganizationId, UserId } from "../domain/Identity.js"

export type TaskCreation =
  | { readonly _tag: "Created"; readonly task: StartTaskRecord }
  /** The user's daily quota is used up: nothing was stored. */
  | { readonly _tag: "LimitReached"; readonly used: number }

/** Whose daily conversation limit an override sets. */
export type LimitScope =
  | { readonly _tag: "User"; readonly id: UserId }
  | { readonly _tag: "Organization"; readonly id: OrganizationId }

/** The stored overrides of the daily conversation limit (-1: exempt). */
export interface LimitOverrides {
  readonly user: Option.Option<number>
  readonly organization: Option.Option<number>
}

/** The sort key of the start-task search, newest first: (created_at in epoch millis, id). */
export type StartTaskSortKey = readonly [number, string]

/**
 * Start tasks and the daily conversation quota they reserve (SPEC §8). Reserving and creating a
 * task are one atomic step, and so are failing a task, giving its reservation back and removing
 * the conversation it had recorded: a task holds exactly one unit of quota until it fails, and
 * gives it back exactly once. Steps apply only to unfinished tasks. Storage failures are defects.
 */
export interface StartTaskStoreShape {
  /**
   * Counts one more conversation for the task's user on its `quota_day`, refusing when `limit`
   * (none: unlimited) is reached, and stores the task; both or neither. Atomic across replicas.
   */
  readonly create: (task: StartTaskRecord, limit: Option.Option<number>) => Effect.Effect<TaskCreation>
  readonly find: (id: StartTaskId) => Effect.Effect<Option.Option<StartTaskRecord>>
  /** The user's tasks, newest first, from a key on. */
  readonly search: (query: {
    readonly userId: UserId
    readonly after: Option.Option<StartTaskSortKey>
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<StartTaskRecord>>
  /** Records a step of an unfinished task; none when the task is finished (or unknown). */
  readonly advance: (id: StartTaskId, patch: StartTaskPatch) => Effect.Effect<Option.Option<StartTaskRecord>>
  /**
   * Stores the task's conversation and moves the task to STARTING_CONVERSATION, naming it; none,
   * and nothing stored, when the task is finished.
   */
  readonly recordConversation: (
    id: StartTaskId,
    conversation: ConversationRecord,
    agentServerUrl: string
  ) => Effect.Effect<Option.Option<StartTaskRecord>>
  /** Moves a task at STARTING_CONVERSATION to READY. */
  readonly complete: (id: StartTaskId) => Effect.Effect<Option.Option<StartTaskRecord>>
  /**
   * Ends an unfinished task in ERROR with `detail`, gives back its quota unit (never below zero)
   * and removes the conversation it recorded; none, and nothing changed, when it was finished.
   */
  readonly fail: (id: StartTaskId, detail: string) => Effect.Effect<Option.Option<StartTaskRecord>>
  /** The unfinished tasks one Hangar instance runs. */
  readonly listUnfinished: (instanceId: string) => Effect.Effect<ReadonlyArray<StartTaskRecord>>
  /** Conversations counted for the user on a UTC day (YYYY-MM-DD). */
  readonly usage: (userId: UserId, day: string) => Effect.Effect<number>
  readonly limitOverrides: (userId: UserId, orgId: Option.Option<OrganizationId>) => Effect.Effect<LimitOverrides>
  /** Sets (some) or removes (none) the override of a user's or an organisation's daily limit. */
  readonly setLimitOverride: (scope: LimitScope, limit: Option.Option<number>) => Effect.Effect<void>
}

export class StartTaskStore extends Context.Tag("hangar/StartTaskStore")<StartTaskStore, StartTaskStoreShape>() {}
