import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { AgentServerClient, AgentServerFailure } from "./AgentServerClient.js"

/** An agent server that neither answers nor fails within this is given up on. */
const REQUEST_TIMEOUT_MS = 30_000

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Real agent servers, over HTTP. Failures are described without the URL's secrets or the key:
 * the reason ends up in a start task's `detail`, which its owner reads.
 */
export const HttpAgentServerClient = Layer.succeed(AgentServerClient, {
  createConversation: ({ agentServerUrl, body, sessionKey }) =>
    Effect.gen(function*() {
      const response = yield* Effect.tryPromise({
        try: (signal) =>
          fetch(`${agentServerUrl}/api/conversations`, {
            method: "POST",
            headers: { "content-type": "application/json", "x-session-api-key": Redacted.value(sessionKey) },
            body: JSON.stringify(body),
            signal: AbortSignal.any([signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)])
          }),
        catch: (error) =>
          new AgentServerFailure({
            reason: error instanceof Error && error.name === "TimeoutError"
              ? `The agent server did not answer within ${REQUEST_TIMEOUT_MS / 1000} seconds`
              : "The agent server could not be reached"
          })
      })
      if (!response.ok) {
        return yield* new AgentServerFailure({ reason: `The agent server refused the conversation (HTTP ${response.status})` })
      }
      const answer = yield* Effect.tryPromise({
        try: () => response.json() as Promise<unknown>,
        catch: () => new AgentServerFailure({ reason: "The agent server answered with something other than JSON" })
      })
      if (!isObject(answer) || answer.id !== body.id) {
        return yield* new AgentServerFailure({ reason: "The agent server did not take the conversation under the id it was given" })
      }
    })
})
