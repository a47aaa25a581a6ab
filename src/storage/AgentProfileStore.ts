import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { AgentProfile, AgentProfileSettings } from "../domain/AgentProfile.js"
import type { AgentProfileId, OrganizationId, UserId } from "../domain/Identity.js"

export type SaveAgentProfileOutcome =
  | { readonly _tag: "Created"; readonly profile: AgentProfile }
  | { readonly _tag: "Replaced"; readonly profile: AgentProfile }
  | { readonly _tag: "LimitReached" }

export type RenameAgentProfileOutcome =
  | { readonly _tag: "Renamed"; readonly profile: AgentProfile }
  | { readonly _tag: "NotFound" }
  | { readonly _tag: "NameTaken" }

/**
 * Agent profiles per organisation, and the members' pointers to them (SPEC §4). A pointer only
 * ever names a profile of the member's own organisation: activation checks it atomically and a
 * delete clears every pointer to the profile in the same step. Storage failures are defects.
 */
export interface AgentProfileStoreShape {
  /** The organisation's profiles by name. */
  readonly list: (orgId: OrganizationId) => Effect.Effect<ReadonlyArray<AgentProfile>>
  readonly findByName: (orgId: OrganizationId, name: string) => Effect.Effect<Option.Option<AgentProfile>>
  /**
   * Replaces the named profile (same id, revision + 1) or creates it (revision 1) unless the
   * organisation already holds `limit` profiles; counting and inserting are one atomic step.
   */
  readonly save: (input: {
    readonly orgId: OrganizationId
    readonly name: string
    readonly settings: AgentProfileSettings
    readonly limit: number
  }) => Effect.Effect<SaveAgentProfileOutcome>
  /** Moves the profile to another name, keeping its id (revision + 1); the same name changes nothing. */
  readonly rename: (orgId: OrganizationId, name: string, newName: string) => Effect.Effect<RenameAgentProfileOutcome>
  /** Deletes the profile and clears every member's pointer to it; false when there was none. */
  readonly remove: (orgId: OrganizationId, name: string) => Effect.Effect<boolean>
  /**
   * Points the member's `active_agent_profile_id` at the profile, writing nothing else; false
   * (and nothing written) when the organisation has no profile with that id or no such member.
   */
  readonly activate: (orgId: OrganizationId, userId: UserId, profileId: AgentProfileId) => Effect.Effect<boolean>
}

export class AgentProfileStore extends Context.Tag("hangar/AgentProfileStore")<AgentProfileStore, AgentProfileStoreShape>() {}
