import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Conflict, NotFound } from "../api/Errors.js"
import type { AgentProfile, AgentProfileSettings } from "../domain/AgentProfile.js"
import type { AgentProfileId, OrganizationId, UserId } from "../domain/Identity.js"
import { AppConfig } from "../AppConfig.js"
import { AgentProfileStore } from "../storage/AgentProfileStore.js"

/** Agent profiles of an organisation and its members' choice among them (SPEC §4). */
export interface AgentProfilesShape {
  readonly list: (orgId: OrganizationId) => Effect.Effect<ReadonlyArray<AgentProfile>>
  readonly get: (orgId: OrganizationId, name: string) => Effect.Effect<AgentProfile, NotFound>
  /** Creates the named profile, or replaces it whole; at most `HANGAR_MAX_AGENT_PROFILES` per organisation. */
  readonly save: (
    orgId: OrganizationId,
    name: string,
    settings: AgentProfileSettings
  ) => Effect.Effect<{ readonly profile: AgentProfile; readonly created: boolean }, Conflict>
  readonly rename: (orgId: OrganizationId, name: string, newName: string) => Effect.Effect<AgentProfile, NotFound | Conflict>
  /** Deletes the profile, clearing every member's pointer to it; false when there was none. */
  readonly remove: (orgId: OrganizationId, name: string) => Effect.Effect<boolean>
  /** Points the member at one of their organisation's profiles; nothing else changes. */
  readonly activate: (orgId: OrganizationId, userId: UserId, profileId: AgentProfileId) => Effect.Effect<void, NotFound>
}

export class AgentProfiles extends Context.Tag("hangar/AgentProfiles")<AgentProfiles, AgentProfilesShape>() {}

const notFound = new NotFound({ detail: "Agent profile not found" })

export const AgentProfilesLive = Layer.effect(
  AgentProfiles,
  Effect.gen(function*() {
    const store = yield* AgentProfileStore
    const { maxAgentProfiles } = yield* AppConfig

    return {
      list: store.list,
      get: (orgId, name) => Effect.flatMap(store.findByName(orgId, name), Option.match({
        onNone: () => Effect.fail(notFound),
        onSome: Effect.succeed
      })),
      save: (orgId, name, settings) =>
        Effect.flatMap(store.save({ orgId, name, settings, limit: maxAgentProfiles }), (outcome) =>
          outcome._tag === "LimitReached"
            ? Effect.fail(new Conflict({
              detail: `The organization already has the maximum of ${maxAgentProfiles} agent profiles`
            }))
            : Effect.succeed({ profile: outcome.profile, created: outcome._tag === "Created" })),
      rename: (orgId, name, newName) =>
        Effect.flatMap(store.rename(orgId, name, newName), (outcome): Effect.Effect<AgentProfile, NotFound | Conflict> => {
          switch (outcome._tag) {
            case "Renamed":
              return Effect.succeed(outcome.profile)
            case "NotFound":
              return Effect.fail(notFound)
            case "NameTaken":
              return Effect.fail(new Conflict({ detail: `An agent profile named ${newName} already exists` }))
          }
        }),
      remove: store.remove,
      activate: (orgId, userId, profileId) =>
        Effect.flatMap(store.activate(orgId, userId, profileId), (activated) =>
          activated ? Effect.void : Effect.fail(notFound))
    }
  })
)
