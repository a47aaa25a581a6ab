import * as Schema from "effect/Schema"
import { AgentProfileId, UserId } from "./Identity.js"
import { SandboxId } from "./Sandbox.js"
import { Timestamp } from "./Timestamp.js"
import { ProviderType } from "./WebClientConfig.js"

export const ConversationId = Schema.String.pipe(Schema.brand("ConversationId"))
export type ConversationId = typeof ConversationId.Type
export const StartTaskId = Schema.String.pipe(Schema.brand("StartTaskId"))
export type StartTaskId = typeof StartTaskId.Type

/** Where a start task is (SPEC §8): it moves forward only, and READY and ERROR are final. */
export const StartTaskStatus = Schema.Literal("WORKING", "WAITING_FOR_SANDBOX", "STARTING_CONVERSATION", "READY", "ERROR")
  .annotations({ identifier: "AppConversationStartTaskStatus" })
export type StartTaskStatus = typeof StartTaskStatus.Type

export const isFinished = (status: StartTaskStatus): boolean => status === "READY" || status === "ERROR"

/** What the agent server reports of a conversation's run. */
export const ExecutionStatus = Schema.Literal(
  "idle",
  "running",
  "paused",
  "waiting_for_confirmation",
  "finished",
  "error",
  "stuck"
).annotations({ identifier: "ConversationExecutionStatus" })
export type ExecutionStatus = typeof ExecutionStatus.Type

/** The last `ConversationErrorEvent` an agent server reported for a conversation. */
export const ConversationError = Schema.Struct({
  code: Schema.String,
  detail: Schema.String,
  classification: Schema.NullOr(Schema.String)
}).annotations({ identifier: "ConversationError" })
export type ConversationError = typeof ConversationError.Type

export const ERROR_EVENT_KIND = "ConversationErrorEvent"

export const Tags = Schema.Record({ key: Schema.String, value: Schema.String })

/** The fields a conversation is started with, as stored and as sent to its agent server. */
export const conversationMetadataFields = {
  title: Schema.NullOr(Schema.String),
  selected_repository: Schema.NullOr(Schema.String),
  selected_branch: Schema.NullOr(Schema.String),
  git_provider: Schema.NullOr(ProviderType),
  trigger: Schema.NullOr(Schema.String),
  llm_model: Schema.NullOr(Schema.String),
  agent_profile_id: Schema.NullOr(AgentProfileId),
  parent_conversation_id: Schema.NullOr(ConversationId),
  tags: Tags
}

/**
 * A stored conversation: an agent run in a sandbox, owned by the user who started it. Its
 * execution status and error are what the sandbox's agent server last reported by webhook (null
 * until it reports); `event_count` is the sequence number of its last stored event.
 */
export class ConversationRecord extends Schema.Class<ConversationRecord>("ConversationRecord")({
  id: ConversationId,
  created_by_user_id: UserId,
  sandbox_id: SandboxId,
  ...conversationMetadataFields,
  public: Schema.Boolean,
  execution_status: Schema.NullOr(ExecutionStatus),
  error: Schema.NullOr(ConversationError),
  event_count: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

/** What the owner may change of a conversation; a field left out keeps its value. */
export interface ConversationPatch {
  readonly title?: string | null
  readonly public?: boolean
  readonly tags?: typeof Tags.Type
}

/** What an agent server may report of a conversation. */
export interface ConversationReport {
  readonly execution_status?: ExecutionStatus
  readonly title?: string
}

/** An event as an agent server posted it: any JSON object with a `kind`. */
export const EventBody = Schema.Record({ key: Schema.String, value: Schema.Unknown })
export type EventBody = typeof EventBody.Type

export class StoredEvent extends Schema.Class<StoredEvent>("StoredEvent")({
  conversation_id: ConversationId,
  /** 1, 2, 3… per conversation, in the order the events were received. */
  sequence: Schema.Number.pipe(Schema.int(), Schema.positive()),
  kind: Schema.String,
  event: EventBody,
  received_at: Timestamp
}) {}

/**
 * The background task that starts a conversation (SPEC §8). It holds one unit of its user's daily
 * quota for `quota_day` from its creation; failing gives it back. `instance_id` names the Hangar
 * instance running it: only that instance may declare it dead after a crash.
 */
export class StartTaskRecord extends Schema.Class<StartTaskRecord>("StartTaskRecord")({
  id: StartTaskId,
  created_by_user_id: UserId,
  status: StartTaskStatus,
  detail: Schema.NullOr(Schema.String),
  app_conversation_id: Schema.NullOr(ConversationId),
  sandbox_id: Schema.NullOr(SandboxId),
  /** The task started its sandbox (rather than being given one): failing, it deletes it. */
  started_sandbox: Schema.Boolean,
  agent_server_url: Schema.NullOr(Schema.String),
  instance_id: Schema.String,
  /** The UTC day (YYYY-MM-DD) whose quota the task counts against. */
  quota_day: Schema.String,
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

/** What a step of a start task records. */
export type StartTaskPatch = Partial<Pick<StartTaskRecord, "status" | "sandbox_id" | "started_sandbox" | "agent_server_url">>

/** The orders a conversation search can list in; ties are broken by id, in the same direction. */
export const ConversationSortOrder = Schema.Literal(
  "CREATED_AT",
  "CREATED_AT_DESC",
  "UPDATED_AT",
  "UPDATED_AT_DESC",
  "TITLE",
  "TITLE_DESC"
).annotations({ identifier: "AppConversationSortOrder" })
export type ConversationSortOrder = typeof ConversationSortOrder.Type
