import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { AgentServerClient } from "./AgentServerClient.js"

/**
 * The agent servers of memory-driver sandboxes, which exist only in Hangar's imagination: they
 * take every conversation (and, like the sandboxes, report nothing back).
 */
export const MemoryAgentServerClient = Layer.succeed(AgentServerClient, {
  createConversation: () => Effect.void
})
