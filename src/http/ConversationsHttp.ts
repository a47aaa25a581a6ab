import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { HangarApi } from "../Api.js"
import {
  AppConversation,
  AppConversationStartTask,
  ConversationCursor,
  ConversationEvent,
  EventCursor,
  StartTaskCursor
} from "../api/ConversationsApi.js"
import { DailyConversationLimitReached, RequestValidationError } from "../api/Errors.js"
import { CurrentPrincipal } from "../api/Security.js"
import type { ConversationSortOrder, StartTaskRecord } from "../domain/Conversation.js"
import type { SandboxId } from "../domain/Sandbox.js"
import { Conversations, type ConversationView } from "../services/Conversations.js"
import { StartTasks } from "../services/StartTasks.js"
import type { ConversationFilters, ConversationSortKey } from "../storage/ConversationStore.js"
import { bodyValueErrors, item } from "./ValidationDetail.js"

/** A 429 for the daily quota carries `Retry-After`: the seconds until the count starts again. */
const retryAfterOnQuota = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.tapError(effect, (error) =>
    !(error instanceof DailyConversationLimitReached)
      ? Effect.void
      : Effect.flatMap(DateTime.now, (now) => {
        const seconds = Math.max(1, Math.ceil((Date.parse(error.detail.reset_at) - now.epochMillis) / 1000))
        return HttpApp.appendPreResponseHandler((_, response) =>
          Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(seconds)))
        )
      }))

/**
 * A conversation as its owner sees it: its sandbox's status, and its URL on the agent server while
 * that runs. Built from stored records, which were validated when made: validating each of a
 * page's hundred rows again cost more than the rest of the request.
 */
export const appConversation = ({ conversation, sandbox }: ConversationView) => {
  const { event_count: _, ...fields } = conversation
  const agentServer = Option.flatMapNullable(
    Option.filter(sandbox, (s) => s.status === "RUNNING"),
    (s) => s.exposed_urls?.find((url) => url.name === "AGENT_SERVER")?.url
  )
  return AppConversation.make({
    ...fields,
    sandbox_status: Option.match(sandbox, { onNone: () => "MISSING" as const, onSome: (s) => s.status }),
    conversation_url: Option.getOrNull(Option.map(agentServer, (url) => `${url}/api/conversations/${conversation.id}`))
  }, { disableValidation: true })
}

export const startTaskInfo = (task: StartTaskRecord) =>
  AppConversationStartTask.make({
    id: task.id,
    status: task.status,
    detail: task.detail,
    app_conversation_id: task.app_conversation_id,
    sandbox_id: task.sandbox_id,
    agent_server_url: task.agent_server_url,
    created_at: task.created_at,
    updated_at: task.updated_at
  })

interface FilterParams {
  readonly title__contains?: string | undefined
  readonly created_at__gte?: DateTime.Utc | undefined
  readonly created_at__lt?: DateTime.Utc | undefined
  readonly updated_at__gte?: DateTime.Utc | undefined
  readonly updated_at__lt?: DateTime.Utc | undefined
  readonly sandbox_id__eq?: SandboxId | undefined
}

const filtersOf = (params: FilterParams): ConversationFilters => ({
  titleContains: Option.fromNullable(params.title__contains),
  createdAtGte: Option.fromNullable(params.created_at__gte),
  createdAtLt: Option.fromNullable(params.created_at__lt),
  updatedAtGte: Option.fromNullable(params.updated_at__gte),
  updatedAtLt: Option.fromNullable(params.updated_at__lt),
  sandboxId: Option.fromNullable(params.sandbox_id__eq)
})

const noFilters = filtersOf({})

type Cursor = typeof ConversationCursor.Type

const encodeCursor = Schema.encodeSync(ConversationCursor)
const encodeEventCursor = Schema.encodeSync(EventCursor)
const encodeTaskCursor = Schema.encodeSync(StartTaskCursor)

const cursorOf = (order: ConversationSortOrder, [value, id]: ConversationSortKey) =>
  encodeCursor([order, value, id] as unknown as Cursor)

/** Where a page starts in `order`: a cursor of another sort order is a 422, never a silent restart. */
const positionIn = (order: ConversationSortOrder, cursor: Cursor | undefined) =>
  cursor === undefined
    ? Effect.succeed(Option.none<ConversationSortKey>())
    : cursor[0] === order
    ? Effect.succeed(Option.some<ConversationSortKey>([cursor[1], cursor[2]]))
    : Effect.fail(
      new RequestValidationError({
        detail: [item(["query", "page_id"], "value_error", `Value error, this page_id belongs to sort_order ${cursor[0]}`, encodeCursor(cursor))]
      })
    )

export const ConversationsHttpLive = HttpApiBuilder.group(HangarApi, "appConversations", (handlers) =>
  Effect.gen(function*() {
    const conversations = yield* Conversations
    const starts = yield* StartTasks
    const caller = Effect.map(CurrentPrincipal, (principal) => principal.userId)

    const search = (order: ConversationSortOrder, filters: ConversationFilters, cursor: Cursor | undefined, limit: number) =>
      Effect.gen(function*() {
        const after = yield* positionIn(order, cursor)
        const page = yield* conversations.search(yield* caller, { filters, order, after, limit })
        return {
          items: page.items.map(appConversation),
          next_page_id: Option.getOrNull(Option.map(page.next, (key) => cursorOf(order, key)))
        }
      })

    return handlers
      .handle("startAppConversation", ({ payload }) =>
        Effect.gen(function*() {
          const { membership, orgId, userId } = yield* CurrentPrincipal
          const activeAgentProfileId = Option.getOrNull(Option.flatMapNullable(membership, (m) => m.active_agent_profile_id))
          const task = yield* starts.start({ userId, orgId, activeAgentProfileId }, payload).pipe(
            Effect.catchTag("UnknownReference", ({ field, reason }) =>
              Effect.fail(bodyValueErrors([{ field, msg: reason, input: payload[field] }]))),
            retryAfterOnQuota
          )
          return startTaskInfo(task)
        }))
      .handle("getAppConversations", ({ urlParams }) =>
        urlParams.id === undefined
          ? search("UPDATED_AT_DESC", noFilters, undefined, urlParams.limit)
          : Effect.map(
            Effect.flatMap(caller, (userId) => conversations.getMany(userId, urlParams.id!)),
            (found) => found.map((view) => Option.getOrNull(Option.map(view, appConversation)))
          ))
      .handle("searchAppConversations", ({ urlParams }) => {
        const { limit, page_id, sort_order, ...filters } = urlParams
        return search(sort_order, filtersOf(filters), page_id, limit)
      })
      .handle("countAppConversations", ({ urlParams }) =>
        Effect.flatMap(caller, (userId) => conversations.count(userId, filtersOf(urlParams))))
      .handle("updateAppConversation", ({ path, payload }) =>
        Effect.flatMap(caller, (userId) => conversations.update(userId, path.id, payload)).pipe(Effect.map(appConversation)))
      .handle("searchAppConversationEvents", ({ path, urlParams }) =>
        Effect.gen(function*() {
          const page = yield* conversations.events(yield* caller, path.id, {
            after: Option.map(Option.fromNullable(urlParams.page_id), ([, sequence]) => sequence),
            limit: urlParams.limit
          })
          return {
            items: page.items.map(({ event, received_at, sequence }) => ConversationEvent.make({ sequence, received_at, event })),
            next_page_id: Option.getOrNull(Option.map(page.next, (sequence) => encodeEventCursor(["event", sequence])))
          }
        }))
      .handle("searchAppConversationStartTasks", ({ urlParams }) =>
        Effect.gen(function*() {
          const page = yield* starts.search(yield* caller, {
            after: Option.map(Option.fromNullable(urlParams.page_id), ([, at, id]) => [at, id] as const),
            limit: urlParams.limit
          })
          return {
            items: page.items.map(startTaskInfo),
            next_page_id: Option.getOrNull(Option.map(page.next, ([at, id]) => encodeTaskCursor(["start-task", at, id])))
          }
        }))
      .handle("batchGetAppConversationStartTasks", ({ urlParams }) =>
        Effect.map(
          Effect.flatMap(caller, (userId) => starts.getMany(userId, urlParams.id)),
          (found) => found.map((task) => Option.getOrNull(Option.map(task, startTaskInfo)))
        ))
  }))
