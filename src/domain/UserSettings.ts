import * as Schema from "effect/Schema"
import { UserId } from "./Identity.js"
import { ProfileName } from "./Profiles.js"
import { Timestamp } from "./Timestamp.js"

/** A BCP 47-like language tag: `en`, `pt-BR`, `zh-Hant`. */
export const Language = Schema.String.pipe(Schema.pattern(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$/)).annotations({
  description: "A language tag such as en or pt-BR",
  examples: ["en"]
})

/** What a user can change of their settings; the key is held sealed. */
export const settingsFields = {
  llm_model: Schema.NullOr(Schema.String),
  llm_base_url: Schema.NullOr(Schema.String),
  llm_api_key_sealed: Schema.NullOr(Schema.String),
  llm_api_version: Schema.NullOr(Schema.String),
  llm_temperature: Schema.NullOr(Schema.Number),
  llm_max_output_tokens: Schema.NullOr(Schema.Number),
  active_llm_profile: Schema.NullOr(ProfileName),
  language: Language,
  confirmation_mode: Schema.Boolean
}

export type SettingsFields = Schema.Struct.Type<typeof settingsFields>

/** A user's settings, the same in every organisation they belong to. */
export class UserSettings extends Schema.Class<UserSettings>("StoredUserSettings")({
  user_id: UserId,
  ...settingsFields,
  updated_at: Schema.NullOr(Timestamp).annotations({ description: "null: never changed" })
}) {}

/** The settings of a user who never changed any. */
export const defaultSettings: SettingsFields = {
  llm_model: null,
  llm_base_url: null,
  llm_api_key_sealed: null,
  llm_api_version: null,
  llm_temperature: null,
  llm_max_output_tokens: null,
  active_llm_profile: null,
  language: "en",
  confirmation_mode: false
}
