import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Context from "effect/Context"
import * as Schema from "effect/Schema"
import { ConversationId, ERROR_EVENT_KIND, ExecutionStatus } from "../domain/Conversation.js"
import type { SandboxRecord } from "../domain/Sandbox.js"
import { Title } from "./ConversationsApi.js"
import { ForbiddenResponse, NotFoundResponse, UnauthorizedResponse } from "./Errors.js"
import { Success } from "./SandboxesApi.js"

/** The sandbox whose agent server is calling. */
export class CurrentSandbox extends Context.Tag("hangar/CurrentSandbox")<CurrentSandbox, SandboxRecord>() {}

/**
 * Agent servers authenticate with their sandbox's session key (SPEC §9), not with an API key: the
 * key's SHA-256 names the sandbox. A missing or unknown key is a 401.
 */
export class SessionKeyAuthentication extends HttpApiMiddleware.Tag<SessionKeyAuthentication>()(
  "hangar/SessionKeyAuthentication",
  {
    provides: CurrentSandbox,
    failure: UnauthorizedResponse,
    security: {
      sessionKey: HttpApiSecurity.apiKey({ key: "X-Session-API-Key", in: "header" }).pipe(
        HttpApiSecurity.annotate(OpenApi.Description, "The session key Hangar gave the sandbox (SESSION_API_KEY).")
      )
    }
  }
) {}

const Rest = Schema.Record({ key: Schema.String, value: Schema.Unknown })

export const ConversationWebhook = Schema.Struct({
  id: ConversationId.pipe(Schema.maxLength(128)),
  execution_status: Schema.optional(ExecutionStatus),
  title: Schema.optional(Schema.NullOr(Title)).annotations({ description: "Recorded when not null" })
}, Rest).annotations({
  identifier: "ConversationWebhook",
  description: "The conversation as the agent server holds it; fields other than these are ignored"
})

const isErrorEventShaped = (event: { readonly [key: string]: unknown }) =>
  typeof event.code === "string" && typeof event.detail === "string" &&
  (event.classification === undefined || event.classification === null || typeof event.classification === "string")

export const WebhookEvent = Schema.Struct({ kind: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(128)) }, Rest).pipe(
  Schema.filter((event) => event.kind !== ERROR_EVENT_KIND || isErrorEventShaped(event), {
    message: () => `a ${ERROR_EVENT_KIND} has a code and a detail (strings), and optionally a classification (string)`
  })
).annotations({
  identifier: "WebhookEvent",
  description: `Any event with a kind. A ${ERROR_EVENT_KIND} (code, detail, optional classification) sets the ` +
    "conversation's execution_status to error and its error."
})

export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.post("onConversationUpdate", "/api/v1/webhooks/conversations")
      .setPayload(ConversationWebhook)
      .addSuccess(Success)
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
      .annotateContext(OpenApi.annotations({
        summary: "On Conversation Update",
        description: "An agent server reports one of its sandbox's conversations: its execution_status and title are " +
          "recorded. 403 for another sandbox's conversation, 404 for one Hangar did not start; nothing is stored then."
      }))
  )
  .add(
    HttpApiEndpoint.post("onConversationEvents", "/api/v1/webhooks/events/:conversation_id")
      .setPath(Schema.Struct({ conversation_id: ConversationId.pipe(Schema.maxLength(128)) }))
      .setPayload(Schema.Array(WebhookEvent).pipe(Schema.maxItems(1000)))
      .addSuccess(Success)
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
      .annotateContext(OpenApi.annotations({
        summary: "On Conversation Events",
        description: "An agent server posts a batch of up to 1000 events of one of its sandbox's conversations; they are " +
          "stored in order, after those posted before. 403 for another sandbox's conversation, 404 for an unknown one; " +
          "nothing is stored then."
      }))
  )
  .middleware(SessionKeyAuthentication)
  .annotateContext(OpenApi.annotations({
    title: "Webhooks",
    description: "What agent servers report back, authenticated by their sandbox's session key"
  }))
{}
