import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import {
  ConversationError,
  ConversationId,
  conversationMetadataFields,
  ConversationSortOrder,
  EventBody,
  ExecutionStatus,
  StartTaskId,
  StartTaskStatus
} from "../domain/Conversation.js"
import { AgentProfileId, UserId } from "../domain/Identity.js"
import { SandboxId, SandboxStatus } from "../domain/Sandbox.js"
import { Timestamp } from "../domain/Timestamp.js"
import { ProviderType } from "../domain/WebClientConfig.js"
import { optionalNullable, requestBody } from "./Bodies.js"
import { DailyConversationLimitReachedResponse, NotFoundResponse } from "./Errors.js"
import { batchIds, DEFAULT_PAGE_LIMIT, Page, PageCursor, pageParams } from "./Pagination.js"
import { Authentication } from "./Security.js"

/** Text Postgres can store (no NUL), of bounded length. */
export const Text = (maxLength: number) =>
  Schema.String.pipe(
    Schema.maxLength(maxLength),
    Schema.filter((value) => !value.includes("\u0000"), { message: () => "must not contain NUL characters" })
  )

export const Title = Text(1024)

const Tags = Schema.Record({ key: Text(64).pipe(Schema.minLength(1)), value: Text(256) }).pipe(
  Schema.filter((tags) => Object.keys(tags).length <= 50, { message: () => "at most 50 tags" })
).annotations({ description: "Free-form labels: at most 50, keys up to 64 characters, values up to 256" })

const Id = <A extends string, I>(id: Schema.Schema<A, I>) => id.pipe(Schema.maxLength(128))

export class AppConversationStartRequest
  extends Schema.Class<AppConversationStartRequest>("AppConversationStartRequest")({
    sandbox_id: optionalNullable(Id(SandboxId)).annotations({
      description: "One of the caller's sandboxes (resumed if paused); none: a new sandbox from the default spec"
    }),
    initial_message: optionalNullable(Text(100_000)).annotations({ description: "The first message for the agent" }),
    title: optionalNullable(Title),
    selected_repository: optionalNullable(Text(256)),
    selected_branch: optionalNullable(Text(256)),
    git_provider: optionalNullable(ProviderType),
    llm_model: optionalNullable(Text(256)),
    agent_profile_id: optionalNullable(Id(AgentProfileId)).annotations({
      description: "One of the organisation's agent profiles; none: the caller's active agent profile"
    }),
    trigger: optionalNullable(Text(64)).annotations({ description: "What started the conversation" }),
    parent_conversation_id: optionalNullable(Id(ConversationId)).annotations({
      description: "One of the caller's conversations"
    }),
    tags: Schema.optionalWith(Tags, { default: () => ({}) })
  }, requestBody("AppConversationStartRequest"))
{}

export class AppConversationStartTask extends Schema.Class<AppConversationStartTask>("AppConversationStartTask")({
  id: StartTaskId,
  status: StartTaskStatus.annotations({
    description: "WORKING → WAITING_FOR_SANDBOX → STARTING_CONVERSATION → READY, or ERROR"
  }),
  detail: Schema.NullOr(Schema.String).annotations({ description: "ERROR: what failed, in plain words" }),
  app_conversation_id: Schema.NullOr(ConversationId).annotations({
    description: "The conversation, from STARTING_CONVERSATION on (null after an ERROR: it is not kept)"
  }),
  sandbox_id: Schema.NullOr(SandboxId),
  agent_server_url: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

export class AppConversation extends Schema.Class<AppConversation>("AppConversation")({
  id: ConversationId,
  created_by_user_id: UserId,
  sandbox_id: SandboxId,
  ...conversationMetadataFields,
  public: Schema.Boolean,
  execution_status: Schema.NullOr(ExecutionStatus).annotations({
    description: "As the agent server last reported it; null until it reports"
  }),
  error: Schema.NullOr(ConversationError).annotations({ description: "The last ConversationErrorEvent, if any" }),
  created_at: Timestamp,
  updated_at: Timestamp,
  sandbox_status: SandboxStatus.annotations({ description: "The sandbox's status now; MISSING once it is deleted" }),
  conversation_url: Schema.NullOr(Schema.String).annotations({
    description: "The conversation on its agent server, while the sandbox is RUNNING"
  })
}) {}

export class AppConversationUpdateRequest extends Schema.Class<AppConversationUpdateRequest>("AppConversationUpdateRequest")({
  title: Schema.optionalWith(Schema.NullOr(Title), { exact: true }),
  public: Schema.optionalWith(Schema.Boolean, { exact: true }),
  tags: Schema.optionalWith(Tags, { exact: true }).annotations({ description: "Replaces every tag" })
}, requestBody("AppConversationUpdateRequest")) {}

export class ConversationEvent extends Schema.Class<ConversationEvent>("ConversationEvent")({
  sequence: Schema.Number.pipe(Schema.int()).annotations({ description: "1, 2, 3… in the order Hangar received them" }),
  received_at: Timestamp,
  event: EventBody.annotations({ description: "The event as the agent server posted it" })
}) {}

const DateOrder = Schema.Literal("CREATED_AT", "CREATED_AT_DESC", "UPDATED_AT", "UPDATED_AT_DESC")
const TitleOrder = Schema.Literal("TITLE", "TITLE_DESC")

/**
 * A conversation page's position: the sort order it belongs to, the last item's sort value (epoch
 * ms of a date, or the title) and its id. A cursor of another order is refused.
 */
export const ConversationCursor = PageCursor(Schema.Union(
  Schema.Tuple(DateOrder, Schema.Number.pipe(Schema.int()), Schema.String),
  Schema.Tuple(TitleOrder, Schema.NullOr(Schema.String), Schema.String)
))

/** A start-task page's position: the last task's creation instant (epoch ms) and id, newest first. */
export const StartTaskCursor = PageCursor(Schema.Tuple(Schema.Literal("start-task"), Schema.Number.pipe(Schema.int()), Schema.String))

/** An event page's position: the last event's sequence number. */
export const EventCursor = PageCursor(Schema.Tuple(Schema.Literal("event"), Schema.Number.pipe(Schema.int(), Schema.nonNegative())))

export const AppConversationPage = Page(AppConversation, "AppConversationPage")
export const StartTaskPage = Page(AppConversationStartTask, "AppConversationStartTaskPage")
export const ConversationEventPage = Page(ConversationEvent, "ConversationEventPage")

const date = (description: string) => Schema.optional(Timestamp.annotations({ description }))

export const conversationFilters = {
  title__contains: Schema.optional(Text(256).annotations({ description: "Part of the title, case-sensitive" })),
  created_at__gte: date("Created at or after"),
  created_at__lt: date("Created before"),
  updated_at__gte: date("Updated at or after"),
  updated_at__lt: date("Updated before"),
  sandbox_id__eq: Schema.optional(Id(SandboxId))
}

const sortOrder = Schema.optionalWith(
  ConversationSortOrder.annotations({
    default: "UPDATED_AT_DESC",
    description: "Ties are broken by id; a missing title sorts after every title (last in TITLE, first in TITLE_DESC)"
  }),
  { default: () => "UPDATED_AT_DESC" as const }
)

const ConversationPath = Schema.Struct({ id: Id(ConversationId) })

export class ConversationsApi extends HttpApiGroup.make("appConversations")
  .add(
    HttpApiEndpoint.post("startAppConversation", "/api/v1/app-conversations")
      .setPayload(AppConversationStartRequest)
      .addSuccess(AppConversationStartTask)
      .addError(NotFoundResponse)
      .addError(DailyConversationLimitReachedResponse)
      .annotateContext(OpenApi.annotations({
        summary: "Start App Conversation",
        description: "Reserves one of the caller's conversations for today and returns a start task at once; the " +
          "conversation is started in the background (sandbox, agent server). Follow the task with the start-task " +
          "endpoints: it ends READY, or ERROR with a detail, the reservation then given back. 404 for a sandbox_id " +
          "that is not the caller's; 429 with Retry-After once the daily quota is used up."
      }))
  )
  .add(
    HttpApiEndpoint.get("getAppConversations", "/api/v1/app-conversations")
      .setUrlParams(Schema.Struct({
        id: Schema.optional(batchIds(Id(ConversationId)).fields.id),
        limit: pageParams(ConversationCursor).limit
      }))
      .addSuccess(Schema.Union(AppConversationPage, Schema.Array(Schema.NullOr(AppConversation))))
      .annotateContext(OpenApi.annotations({
        summary: "Get App Conversations",
        description: "With `id` (up to 100): those conversations in request order, null for an id that is unknown or " +
          "not the caller's. Without: the first page of the caller's conversations, most recently updated first " +
          `(${DEFAULT_PAGE_LIMIT} unless \`limit\` says otherwise); continue with /search.`
      }))
  )
  .add(
    HttpApiEndpoint.get("searchAppConversations", "/api/v1/app-conversations/search")
      .setUrlParams(Schema.Struct({ ...conversationFilters, sort_order: sortOrder, ...pageParams(ConversationCursor) }))
      .addSuccess(AppConversationPage)
      .annotateContext(OpenApi.annotations({
        summary: "Search App Conversations",
        description: "The caller's conversations that pass every filter given, in `sort_order`. Keyset-paginated: a " +
          "page_id is valid for the sort order it came from only."
      }))
  )
  .add(
    HttpApiEndpoint.get("countAppConversations", "/api/v1/app-conversations/count")
      .setUrlParams(Schema.Struct(conversationFilters))
      .addSuccess(Schema.Number.pipe(Schema.int()))
      .annotateContext(OpenApi.annotations({
        summary: "Count App Conversations",
        description: "How many of the caller's conversations pass every filter given (the filters of /search)."
      }))
  )
  .add(
    HttpApiEndpoint.patch("updateAppConversation", "/api/v1/app-conversations/:id")
      .setPath(ConversationPath)
      .setPayload(AppConversationUpdateRequest)
      .addSuccess(AppConversation)
      .addError(NotFoundResponse)
      .annotateContext(OpenApi.annotations({
        summary: "Update App Conversation",
        description: "Changes the title, public flag or tags of one of the caller's conversations; fields left out keep " +
          "their values."
      }))
  )
  .add(
    HttpApiEndpoint.get("searchAppConversationEvents", "/api/v1/app-conversations/:id/events")
      .setPath(ConversationPath)
      .setUrlParams(Schema.Struct(pageParams(EventCursor)))
      .addSuccess(ConversationEventPage)
      .addError(NotFoundResponse)
      .annotateContext(OpenApi.annotations({
        summary: "Search App Conversation Events",
        description: "The events the agent server posted for one of the caller's conversations, in the order received."
      }))
  )
  .add(
    HttpApiEndpoint.get("searchAppConversationStartTasks", "/api/v1/app-conversations/start-tasks/search")
      .setUrlParams(Schema.Struct(pageParams(StartTaskCursor)))
      .addSuccess(StartTaskPage)
      .annotateContext(OpenApi.annotations({
        summary: "Search App Conversation Start Tasks",
        description: "The caller's start tasks, newest first."
      }))
  )
  .add(
    HttpApiEndpoint.get("batchGetAppConversationStartTasks", "/api/v1/app-conversations/start-tasks")
      .setUrlParams(batchIds(Id(StartTaskId)))
      .addSuccess(Schema.Array(Schema.NullOr(AppConversationStartTask)))
      .annotateContext(OpenApi.annotations({
        summary: "Batch Get App Conversation Start Tasks",
        description: "The start tasks with these ids, in request order; null for an id that is unknown or not the caller's."
      }))
  )
  .middleware(Authentication)
  .annotateContext(OpenApi.annotations({
    title: "Conversations",
    description: "Agent runs in sandboxes: starting them, finding them, their events"
  }))
{}
