import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { NotFound } from "../api/Errors.js"
import type { UserId } from "../domain/Identity.js"
import {
  baseUrlProblem,
  type FieldProblem,
  InvalidFields,
  maxOutputTokensProblem,
  modelProblem,
  ruleProblem,
  temperatureProblem
} from "../domain/LlmProfile.js"
import { defaultSettings, type SettingsFields, UserSettings } from "../domain/UserSettings.js"
import { LlmProfileStore } from "../storage/LlmProfileStore.js"
import { SettingsStore } from "../storage/SettingsStore.js"
import { SecretBox } from "./SecretBox.js"

/** A partial update as the caller sends it: the key in clear, fields left out kept as they are. */
export interface SettingsChanges extends Partial<Omit<SettingsFields, "llm_api_key_sealed">> {
  readonly llm_api_key?: string | null
}

/** Each user's settings, one set across all their organisations (SPEC §5). */
export interface SettingsShape {
  /** The defaults until the user first changes something. */
  readonly get: (userId: UserId) => Effect.Effect<UserSettings>
  /**
   * Applies the changes. `active_llm_profile` loads that profile's LLM values first, then the
   * request's own `llm_*` fields apply on top; an unknown profile changes nothing (404).
   */
  readonly update: (userId: UserId, changes: SettingsChanges) => Effect.Effect<UserSettings, NotFound | InvalidFields>
}

export class Settings extends Context.Tag("hangar/Settings")<Settings, SettingsShape>() {}

const profileNotFound = new NotFound({ detail: "LLM profile not found" })

/** The LLM rules, by settings field, for the values given (null clears and is always fine). */
const problemsOf = (changes: SettingsChanges): ReadonlyArray<FieldProblem> => [
  ...ruleProblem("llm_model", changes.llm_model, modelProblem),
  ...ruleProblem("llm_base_url", changes.llm_base_url, baseUrlProblem),
  ...ruleProblem("llm_temperature", changes.llm_temperature, temperatureProblem),
  ...ruleProblem("llm_max_output_tokens", changes.llm_max_output_tokens, maxOutputTokensProblem)
]

export const SettingsLive = Layer.effect(
  Settings,
  Effect.gen(function*() {
    const store = yield* SettingsStore
    const profiles = yield* LlmProfileStore
    const box = yield* SecretBox

    /** What choosing the profile writes: its LLM values, as stored (the key stays sealed). */
    const loadProfile = (userId: UserId, name: string) =>
      Effect.flatMap(profiles.find(userId, name), Option.match({
        onNone: () => Effect.fail(profileNotFound),
        onSome: (profile): Effect.Effect<Partial<SettingsFields>> =>
          Effect.succeed({
            llm_model: profile.model,
            llm_base_url: profile.base_url,
            llm_api_key_sealed: profile.api_key_sealed,
            llm_api_version: profile.api_version,
            llm_temperature: profile.temperature,
            llm_max_output_tokens: profile.max_output_tokens,
            active_llm_profile: profile.name
          })
      }))

    return {
      get: (userId) =>
        Effect.map(store.find(userId), Option.getOrElse(() => UserSettings.make({ ...defaultSettings, user_id: userId, updated_at: null }))),
      update: (userId, changes) =>
        Effect.gen(function*() {
          const problems = problemsOf(changes)
          if (problems.length > 0) return yield* new InvalidFields({ problems })
          const { active_llm_profile, llm_api_key, ...rest } = changes
          const loaded = typeof active_llm_profile === "string"
            ? yield* loadProfile(userId, active_llm_profile)
            : active_llm_profile === null
            ? { active_llm_profile: null }
            : {}
          const key = llm_api_key === undefined
            ? {}
            : { llm_api_key_sealed: llm_api_key === null ? null : box.seal(llm_api_key) }
          const updated = yield* store.update(userId, { ...loaded, ...rest, ...key })
          // The profile was deleted after it was read.
          return yield* Option.match(updated, { onNone: () => Effect.fail(profileNotFound), onSome: Effect.succeed })
        })
    }
  })
)
