import * as Schema from "effect/Schema"
import { AgentProfileId, OrganizationId } from "./Identity.js"
import { ProfileName } from "./Profiles.js"
import { Timestamp } from "./Timestamp.js"

export const AgentKind = Schema.Literal("openhands", "acp").annotations({
  identifier: "AgentKind",
  description: "`openhands`: the built-in agent; `acp`: an agent spoken to over the Agent Client Protocol"
})
export type AgentKind = typeof AgentKind.Type

/** What a create or replace writes: everything of a profile but its identity and history. */
export const agentProfileSettingsFields = {
  agent_kind: AgentKind,
  llm_profile_ref: Schema.NullOr(ProfileName).annotations({
    description: "The name of the LLM profile the agent uses, among those of whoever runs it"
  }),
  mcp_server_refs: Schema.Array(Schema.String).annotations({ description: "MCP servers the agent may use" }),
  system_message_suffix: Schema.NullOr(Schema.String).annotations({
    description: "Appended to the agent's system message"
  }),
  acp_server: Schema.NullOr(Schema.String).annotations({ description: "acp only: the ACP provider's key" }),
  acp_model: Schema.NullOr(Schema.String).annotations({ description: "acp only: the model the ACP agent uses" }),
  acp_command: Schema.NullOr(Schema.String).annotations({
    description: "acp only: the program to run instead of the provider's default command"
  }),
  acp_args: Schema.Array(Schema.String).annotations({ description: "acp only: arguments for the program" })
}

export type AgentProfileSettings = Schema.Struct.Type<typeof agentProfileSettingsFields>

export const acpFields = ["acp_server", "acp_model", "acp_command", "acp_args"] as const

/** A rule of the profile's kind that its settings break. */
export interface KindProblem {
  readonly field: keyof AgentProfileSettings
  readonly msg: string
  readonly input: unknown
}

/**
 * The ACP fields describe how to reach an ACP agent: an `acp` profile needs at least its
 * provider, and an `openhands` profile refuses them rather than store settings nothing reads.
 */
export const kindProblems = (settings: AgentProfileSettings): ReadonlyArray<KindProblem> => {
  if (settings.agent_kind === "acp") {
    return settings.acp_server === null
      ? [{ field: "acp_server", msg: "required when agent_kind is 'acp'", input: null }]
      : []
  }
  return acpFields.flatMap((field): Array<KindProblem> => {
    const value = settings[field]
    const set = Array.isArray(value) ? value.length > 0 : value !== null
    return set ? [{ field, msg: "only allowed when agent_kind is 'acp'", input: value }] : []
  })
}

/** An agent profile as stored: one organisation's, addressed by name, identified by id. */
export class AgentProfile extends Schema.Class<AgentProfile>("StoredAgentProfile")({
  id: AgentProfileId,
  org_id: OrganizationId,
  name: ProfileName,
  revision: Schema.Number.pipe(Schema.int()).annotations({ description: "1 at creation, bumped on every update" }),
  ...agentProfileSettingsFields,
  created_at: Timestamp,
  updated_at: Timestamp
}) {}
