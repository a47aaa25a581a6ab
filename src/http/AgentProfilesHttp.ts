import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { HangarApi } from "../Api.js"
import {
  AgentProfileActivated,
  AgentProfileDeleted,
  AgentProfileInfo,
  AgentProfileList,
  AgentProfileSummary
} from "../api/AgentProfilesApi.js"
import { kindProblems } from "../domain/AgentProfile.js"
import { AgentProfiles } from "../services/AgentProfiles.js"
import { answerCreated } from "./Created.js"
import { requirePermission } from "./Policy.js"
import { bodyValueErrors } from "./ValidationDetail.js"

const administer = requirePermission("EDIT_ORG_SETTINGS")

export const AgentProfilesHttpLive = HttpApiBuilder.group(HangarApi, "agentProfiles", (handlers) =>
  Effect.gen(function*() {
    const profiles = yield* AgentProfiles
    return handlers
      .handle("listAgentProfiles", () =>
        Effect.gen(function*() {
          const membership = yield* requirePermission("VIEW_ORG_SETTINGS")
          const all = yield* profiles.list(membership.org_id)
          return AgentProfileList.make({
            profiles: all.map(({ agent_kind, id, name, revision }) => AgentProfileSummary.make({ id, name, agent_kind, revision })),
            active_agent_profile_id: membership.active_agent_profile_id
          })
        }))
      .handle("getAgentProfile", ({ path }) =>
        Effect.gen(function*() {
          const { org_id } = yield* administer
          return AgentProfileInfo.make(yield* profiles.get(org_id, path.name))
        }))
      .handle("saveAgentProfile", ({ path, payload }) =>
        Effect.gen(function*() {
          const { org_id } = yield* administer
          const settings = { ...payload }
          const problems = kindProblems(settings)
          if (problems.length > 0) return yield* bodyValueErrors(problems)
          const { created, profile } = yield* profiles.save(org_id, path.name, settings)
          if (created) yield* answerCreated
          return AgentProfileInfo.make(profile)
        }))
      .handle("renameAgentProfile", ({ path, payload }) =>
        Effect.gen(function*() {
          const { org_id } = yield* administer
          return AgentProfileInfo.make(yield* profiles.rename(org_id, path.name, payload.new_name))
        }))
      .handle("deleteAgentProfile", ({ path }) =>
        Effect.gen(function*() {
          const { org_id } = yield* administer
          return AgentProfileDeleted.make({ name: path.name, deleted: yield* profiles.remove(org_id, path.name) })
        }))
      .handle("activateAgentProfile", ({ path }) =>
        Effect.gen(function*() {
          const { org_id, user_id } = yield* requirePermission("VIEW_ORG_SETTINGS")
          yield* profiles.activate(org_id, user_id, path.profile_id)
          return AgentProfileActivated.make({
            id: path.profile_id,
            message: "Agent profile activated",
            agent_settings_applied: false
          })
        }))
  }))
