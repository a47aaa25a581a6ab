import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { AgentKind, AgentProfile } from "../domain/AgentProfile.js"
import { AgentProfileId } from "../domain/Identity.js"
import { ProfileName } from "../domain/Profiles.js"
import { optionalNullable, requestBody } from "./Bodies.js"
import { ConflictResponse, ForbiddenResponse, NotFoundResponse } from "./Errors.js"
import { Authentication } from "./Security.js"

const optionalList = <A, I>(schema: Schema.Schema<ReadonlyArray<A>, ReadonlyArray<I>>) =>
  Schema.optionalWith(schema.annotations({ default: [] }), { default: () => [] })

const Text = (maxLength: number) => Schema.String.pipe(Schema.minLength(1), Schema.maxLength(maxLength))

export class AgentProfileRequest extends Schema.Class<AgentProfileRequest>("AgentProfileRequest")({
  agent_kind: Schema.optionalWith(AgentKind.annotations({ default: "openhands" }), { default: () => "openhands" as const }),
  llm_profile_ref: optionalNullable(ProfileName).annotations({
    description: "The name of the LLM profile the agent uses, among those of whoever runs it"
  }),
  mcp_server_refs: optionalList(Schema.Array(Text(256)).pipe(Schema.maxItems(64))).annotations({
    description: "MCP servers the agent may use"
  }),
  system_message_suffix: optionalNullable(Schema.String.pipe(Schema.maxLength(20_000))).annotations({
    description: "Appended to the agent's system message"
  }),
  acp_server: optionalNullable(Text(128)).annotations({ description: "acp only, and required for acp: the ACP provider's key" }),
  acp_model: optionalNullable(Text(256)).annotations({ description: "acp only: the model the ACP agent uses" }),
  acp_command: optionalNullable(Text(1024)).annotations({
    description: "acp only: the program to run instead of the provider's default command"
  }),
  acp_args: optionalList(Schema.Array(Schema.String.pipe(Schema.maxLength(4096))).pipe(Schema.maxItems(64)))
    .annotations({ description: "acp only: arguments for the program" })
}, requestBody("AgentProfileRequest")) {}

export class AgentProfileInfo extends Schema.Class<AgentProfileInfo>("AgentProfile")(AgentProfile.fields) {}

export class AgentProfileSummary extends Schema.Class<AgentProfileSummary>("AgentProfileSummary")({
  id: AgentProfileId,
  name: ProfileName,
  agent_kind: AgentKind,
  revision: AgentProfile.fields.revision
}) {}

export class AgentProfileList extends Schema.Class<AgentProfileList>("AgentProfileList")({
  profiles: Schema.Array(AgentProfileSummary).annotations({ description: "The organisation's profiles, by name" }),
  active_agent_profile_id: Schema.NullOr(AgentProfileId).annotations({ description: "The caller's active profile" })
}) {}

export class RenameAgentProfileRequest extends Schema.Class<RenameAgentProfileRequest>("RenameAgentProfileRequest")({
  new_name: ProfileName
}, requestBody("RenameAgentProfileRequest")) {}

export class AgentProfileDeleted extends Schema.Class<AgentProfileDeleted>("AgentProfileDeleted")({
  name: ProfileName,
  deleted: Schema.Boolean.annotations({ description: "false: there was no such profile (deleting is idempotent)" })
}) {}

/** The seed's "agent profile activation result". */
export class AgentProfileActivated extends Schema.Class<AgentProfileActivated>("AgentProfileActivationResult")({
  id: Schema.String.annotations({ description: "Identifier of the profile" }),
  message: Schema.String,
  agent_settings_applied: Schema.Boolean.annotations({
    description: "Always false for activation: no agent settings are materialised"
  })
}) {}

const byName = Schema.Struct({ name: ProfileName })

export class AgentProfilesApi extends HttpApiGroup.make("agentProfiles")
  .add(
    HttpApiEndpoint.get("listAgentProfiles", "/api/agent-profiles")
      .addSuccess(AgentProfileList)
      .addError(ForbiddenResponse)
      .annotateContext(OpenApi.annotations({
        summary: "List Agent Profiles",
        description: "The organisation's profiles in summary, and the caller's active one (VIEW_ORG_SETTINGS)."
      }))
  )
  .add(
    HttpApiEndpoint.get("getAgentProfile", "/api/agent-profiles/:name")
      .setPath(byName)
      .addSuccess(AgentProfileInfo)
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
      .annotateContext(OpenApi.annotations({
        summary: "Get Agent Profile",
        description: "The whole profile (EDIT_ORG_SETTINGS)."
      }))
  )
  .add(
    HttpApiEndpoint.post("saveAgentProfile", "/api/agent-profiles/:name")
      .setPath(byName)
      .setPayload(AgentProfileRequest)
      .addSuccess(AgentProfileInfo)
      .addSuccess(AgentProfileInfo, { status: 201 })
      .addError(ForbiddenResponse)
      .addError(ConflictResponse)
      .annotateContext(OpenApi.annotations({
        summary: "Save Agent Profile",
        description: "Creates the profile (201, revision 1) or replaces it whole (200, same id, next revision); " +
          "fields left out take their defaults (EDIT_ORG_SETTINGS). The acp_* fields belong to `acp` profiles, " +
          "which need acp_server; an `openhands` profile refuses them (422). Creating beyond " +
          "HANGAR_MAX_AGENT_PROFILES profiles in the organisation is a 409."
      }))
  )
  .add(
    HttpApiEndpoint.post("renameAgentProfile", "/api/agent-profiles/:name/rename")
      .setPath(byName)
      .setPayload(RenameAgentProfileRequest)
      .addSuccess(AgentProfileInfo)
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
      .addError(ConflictResponse)
      .annotateContext(OpenApi.annotations({
        summary: "Rename Agent Profile",
        description: "Moves the profile to new_name, keeping its id, so members who activated it keep it " +
          "(EDIT_ORG_SETTINGS; next revision). 404 when there is no such profile, 409 when new_name is taken."
      }))
  )
  .add(
    HttpApiEndpoint.del("deleteAgentProfile", "/api/agent-profiles/:name")
      .setPath(byName)
      .addSuccess(AgentProfileDeleted)
      .addError(ForbiddenResponse)
      .annotateContext(OpenApi.annotations({
        summary: "Delete Agent Profile",
        description: "Deletes the profile and clears every member's pointer to it (EDIT_ORG_SETTINGS). " +
          "Idempotent: deleting a missing profile is a 200 too."
      }))
  )
  .add(
    HttpApiEndpoint.post("activateAgentProfile", "/api/agent-profiles/:profile_id/activate")
      .setPath(Schema.Struct({
        profile_id: AgentProfileId.pipe(Schema.minLength(1), Schema.maxLength(128)).annotations({ description: "The profile's id" })
      }))
      .addSuccess(AgentProfileActivated)
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
      .annotateContext(OpenApi.annotations({
        summary: "Activate Agent Profile",
        description: "Makes the profile the calling member's active agent profile (VIEW_ORG_SETTINGS suffices: each " +
          "member picks their own). Only that pointer is written: no agent settings are materialised " +
          "(agent_settings_applied is false) and the profile itself is untouched. 404 when no stored profile of " +
          "the caller's organisation has this id."
      }))
  )
  .middleware(Authentication)
  .annotateContext(OpenApi.annotations({
    title: "Agent Profiles",
    description: "Agent profiles of the organisation, and each member's active one"
  }))
{}
