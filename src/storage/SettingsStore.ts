import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { UserId } from "../domain/Identity.js"
import type { SettingsFields, UserSettings } from "../domain/UserSettings.js"

/** Each user's settings (SPEC §5). Storage failures are defects. */
export interface SettingsStoreShape {
  /** None until the user first changes a setting. */
  readonly find: (userId: UserId) => Effect.Effect<Option.Option<UserSettings>>
  /**
   * Writes the given fields, keeping the others (the defaults for a user without settings).
   * None, with nothing written, when `active_llm_profile` names no profile of the user.
   */
  readonly update: (userId: UserId, changes: Partial<SettingsFields>) => Effect.Effect<Option.Option<UserSettings>>
}

export class SettingsStore extends Context.Tag("hangar/SettingsStore")<SettingsStore, SettingsStoreShape>() {}
