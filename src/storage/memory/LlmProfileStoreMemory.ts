import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { LlmProfile } from "../../domain/LlmProfile.js"
import { UserSettings } from "../../domain/UserSettings.js"
import { LlmProfileStore, type LlmProfileStoreShape } from "../LlmProfileStore.js"
import { MemoryTables, scopedKey } from "./MemoryTables.js"

/** Volatile LLM profiles. Each method runs synchronously, so each is atomic. */
export const LlmProfileStoreMemory = Layer.effect(
  LlmProfileStore,
  Effect.map(MemoryTables, ({ llmProfiles, settings }): LlmProfileStoreShape => {
    const ofUser = (userId: string) => Array.from(llmProfiles.values()).filter((profile) => profile.user_id === userId)

    return {
      list: (userId) =>
        Effect.sync(() => ofUser(userId).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))),
      find: (userId, name) => Effect.sync(() => Option.fromNullable(llmProfiles.get(scopedKey(userId, name)))),
      save: ({ apiKeySealed, fields, limit, name, userId }) =>
        Effect.sync(() => {
          const key = scopedKey(userId, name)
          const existing = llmProfiles.get(key)
          const now = DateTime.unsafeNow()
          if (existing === undefined && ofUser(userId).length >= limit) return { _tag: "LimitReached" as const }
          const profile = LlmProfile.make({
            user_id: userId,
            name,
            ...fields,
            api_key_sealed: Option.getOrElse(apiKeySealed, () => existing?.api_key_sealed ?? null),
            created_at: existing?.created_at ?? now,
            updated_at: now
          })
          llmProfiles.set(key, profile)
          return { _tag: existing === undefined ? "Created" as const : "Replaced" as const, profile }
        }),
      remove: (userId, name) =>
        Effect.sync(() => {
          if (!llmProfiles.delete(scopedKey(userId, name))) return false
          const current = settings.get(userId)
          if (current?.active_llm_profile === name) {
            settings.set(userId, UserSettings.make({ ...current, active_llm_profile: null }))
          }
          return true
        })
    }
  })
)
