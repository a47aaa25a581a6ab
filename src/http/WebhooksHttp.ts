import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { HangarApi } from "../Api.js"
import { Success } from "../api/SandboxesApi.js"
import { CurrentSandbox, SessionKeyAuthentication } from "../api/WebhooksApi.js"
import { Conversations } from "../services/Conversations.js"

const success = Success.make({ success: true })

/** Recognises an agent server by its sandbox's session key (hashed, then looked up). */
export const SessionKeyAuthenticationLive = Layer.effect(
  SessionKeyAuthentication,
  Effect.map(Conversations, (conversations) => ({
    sessionKey: (key: Redacted.Redacted<string>) => conversations.sandboxOfAgent(Redacted.value(key).trim())
  }))
)

export const WebhooksHttpLive = HttpApiBuilder.group(HangarApi, "webhooks", (handlers) =>
  Effect.gen(function*() {
    const conversations = yield* Conversations
    return handlers
      .handle("onConversationUpdate", ({ payload }) =>
        Effect.gen(function*() {
          const sandbox = yield* CurrentSandbox
          yield* conversations.report(sandbox, payload.id, {
            ...(payload.execution_status === undefined ? {} : { execution_status: payload.execution_status }),
            ...(payload.title === undefined || payload.title === null ? {} : { title: payload.title })
          })
          return success
        }))
      .handle("onConversationEvents", ({ path, payload }) =>
        Effect.gen(function*() {
          yield* conversations.appendEvents(yield* CurrentSandbox, path.conversation_id, payload)
          return success
        }))
  }))
