import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { defaultSettings, UserSettings } from "../../domain/UserSettings.js"
import { SettingsStore, type SettingsStoreShape } from "../SettingsStore.js"
import { MemoryTables, scopedKey } from "./MemoryTables.js"

/** Volatile settings. Each method runs synchronously, so each is atomic. */
export const SettingsStoreMemory = Layer.effect(
  SettingsStore,
  Effect.map(MemoryTables, ({ llmProfiles, settings }): SettingsStoreShape => ({
    find: (userId) => Effect.sync(() => Option.fromNullable(settings.get(userId))),
    update: (userId, changes) =>
      Effect.sync(() => {
        const profile = changes.active_llm_profile
        if (profile != null && !llmProfiles.has(scopedKey(userId, profile))) return Option.none()
        const updated = UserSettings.make({
          ...defaultSettings,
          ...settings.get(userId),
          ...Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)),
          user_id: userId,
          updated_at: DateTime.unsafeNow()
        })
        settings.set(userId, updated)
        return Option.some(updated)
      })
  }))
)
