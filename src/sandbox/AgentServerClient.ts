import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import type * as Redacted from "effect/Redacted"

/** Why an agent server did not take a conversation, in words fit for a start task's detail. */
export class AgentServerFailure extends Data.TaggedError("AgentServerFailure")<{ readonly reason: string }> {}

export interface NewConversation {
  /** The agent server's base URL (the sandbox's AGENT_SERVER URL). */
  readonly agentServerUrl: string
  readonly sessionKey: Redacted.Redacted<string>
  /** The conversation as the agent server is to create it, Hangar's id included. */
  readonly body: { readonly id: string } & Record<string, unknown>
}

/**
 * How Hangar speaks to the agent servers in its sandboxes: over HTTP to real ones, or to the
 * pretend agent servers of pretend (memory-driver) sandboxes.
 */
export interface AgentServerClientShape {
  /** `POST /api/conversations` with `X-Session-API-Key`; succeeds once the agent server holds it under its id. */
  readonly createConversation: (request: NewConversation) => Effect.Effect<void, AgentServerFailure>
}

export class AgentServerClient extends Context.Tag("hangar/AgentServerClient")<AgentServerClient, AgentServerClientShape>() {}
