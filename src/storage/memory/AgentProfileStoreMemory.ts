import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { AgentProfile } from "../../domain/AgentProfile.js"
import { type AgentProfileId, Membership, type OrganizationId } from "../../domain/Identity.js"
import { AgentProfileStore, type AgentProfileStoreShape } from "../AgentProfileStore.js"
import { membershipKey, MemoryTables, scopedKey } from "./MemoryTables.js"

/** Volatile agent profiles. Each method runs synchronously, so each is atomic. */
export const AgentProfileStoreMemory = Layer.effect(
  AgentProfileStore,
  Effect.map(MemoryTables, ({ agentProfiles, agentProfilesByName, memberships }): AgentProfileStoreShape => {
    const find = (orgId: OrganizationId, name: string) =>
      Option.fromNullable(agentProfilesByName.get(scopedKey(orgId, name))).pipe(
        Option.flatMapNullable((id) => agentProfiles.get(id))
      )

    const put = (profile: AgentProfile) => {
      agentProfiles.set(profile.id, profile)
      agentProfilesByName.set(scopedKey(profile.org_id, profile.name), profile.id)
      return profile
    }

    const countIn = (orgId: OrganizationId) => {
      let count = 0
      for (const profile of agentProfiles.values()) if (profile.org_id === orgId) count++
      return count
    }

    return {
      list: (orgId) =>
        Effect.sync(() =>
          Array.from(agentProfiles.values())
            .filter((profile) => profile.org_id === orgId)
            .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
        ),
      findByName: (orgId, name) => Effect.sync(() => find(orgId, name)),
      save: ({ limit, name, orgId, settings }) =>
        Effect.sync(() => {
          const now = DateTime.unsafeNow()
          const existing = find(orgId, name)
          if (Option.isSome(existing)) {
            const profile = existing.value
            return {
              _tag: "Replaced" as const,
              profile: put(AgentProfile.make({ ...profile, ...settings, revision: profile.revision + 1, updated_at: now }))
            }
          }
          if (countIn(orgId) >= limit) return { _tag: "LimitReached" as const }
          return {
            _tag: "Created" as const,
            profile: put(AgentProfile.make({
              id: crypto.randomUUID() as AgentProfileId,
              org_id: orgId,
              name,
              revision: 1,
              ...settings,
              created_at: now,
              updated_at: now
            }))
          }
        }),
      rename: (orgId, name, newName) =>
        Effect.sync(() => {
          const existing = find(orgId, name)
          if (Option.isNone(existing)) return { _tag: "NotFound" as const }
          if (newName === name) return { _tag: "Renamed" as const, profile: existing.value }
          if (agentProfilesByName.has(scopedKey(orgId, newName))) return { _tag: "NameTaken" as const }
          agentProfilesByName.delete(scopedKey(orgId, name))
          const profile = existing.value
          return {
            _tag: "Renamed" as const,
            profile: put(AgentProfile.make({ ...profile, name: newName, revision: profile.revision + 1, updated_at: DateTime.unsafeNow() }))
          }
        }),
      remove: (orgId, name) =>
        Effect.sync(() => {
          const existing = find(orgId, name)
          if (Option.isNone(existing)) return false
          const { id } = existing.value
          agentProfiles.delete(id)
          agentProfilesByName.delete(scopedKey(orgId, name))
          for (const [key, membership] of memberships) {
            if (membership.org_id === orgId && membership.active_agent_profile_id === id) {
              memberships.set(key, Membership.make({ ...membership, active_agent_profile_id: null }))
            }
          }
          return true
        }),
      activate: (orgId, userId, profileId) =>
        Effect.sync(() => {
          const profile = agentProfiles.get(profileId)
          const key = membershipKey(orgId, userId)
          const membership = memberships.get(key)
          if (profile === undefined || profile.org_id !== orgId || membership === undefined) return false
          memberships.set(key, Membership.make({ ...membership, active_agent_profile_id: profileId }))
          return true
        })
    }
  })
)
