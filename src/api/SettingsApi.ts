import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { ProfileName } from "../domain/Profiles.js"
import { Language } from "../domain/UserSettings.js"
import { requestBody } from "./Bodies.js"
import { NotFoundResponse } from "./Errors.js"
import { llmFieldDescriptions, MaskedSecret } from "./LlmProfilesApi.js"
import { Authentication } from "./Security.js"

export class SettingsInfo extends Schema.Class<SettingsInfo>("Settings")({
  llm_model: Schema.NullOr(Schema.String),
  llm_base_url: Schema.NullOr(Schema.String),
  llm_api_key: MaskedSecret,
  llm_api_version: Schema.NullOr(Schema.String),
  llm_temperature: Schema.NullOr(Schema.Number),
  llm_max_output_tokens: Schema.NullOr(Schema.Number),
  active_llm_profile: Schema.NullOr(ProfileName).annotations({
    description: "The LLM profile whose values were last loaded into these settings"
  }),
  language: Language,
  confirmation_mode: Schema.Boolean.annotations({ description: "Ask before the agent acts" })
}) {}

const change = <A, I>(schema: Schema.Schema<A, I>, description: string) =>
  Schema.optionalWith(schema, { exact: true }).annotations({ description })

export class SettingsPatch extends Schema.Class<SettingsPatch>("SettingsPatch")({
  llm_model: change(Schema.NullOr(Schema.String), llmFieldDescriptions.model),
  llm_base_url: change(Schema.NullOr(Schema.String.pipe(Schema.maxLength(2048))), llmFieldDescriptions.base_url),
  llm_api_key: change(Schema.NullOr(Schema.String.pipe(Schema.minLength(1))), "Write-only, stored encrypted; null removes it"),
  llm_api_version: change(Schema.NullOr(Schema.String.pipe(Schema.maxLength(64))), llmFieldDescriptions.api_version),
  llm_temperature: change(Schema.NullOr(Schema.Number), llmFieldDescriptions.temperature),
  llm_max_output_tokens: change(Schema.NullOr(Schema.Number), llmFieldDescriptions.max_output_tokens),
  active_llm_profile: change(
    Schema.NullOr(ProfileName),
    "Loads this LLM profile of yours (model, base URL, key, version, temperature, max tokens) into the settings; " +
      "null forgets which profile was loaded, keeping the values"
  ),
  language: change(Language, "A language tag such as en or pt-BR"),
  confirmation_mode: change(Schema.Boolean, "Ask before the agent acts")
}, requestBody("SettingsPatch")) {}

export class SettingsApi extends HttpApiGroup.make("settings")
  .add(
    HttpApiEndpoint.get("getSettings", "/api/settings")
      .addSuccess(SettingsInfo)
      .annotateContext(OpenApi.annotations({
        summary: "Get Settings",
        description: "The caller's settings: one set per user, the same in every organisation. Defaults until " +
          "first changed (language en, confirmation_mode false, no LLM)."
      }))
  )
  .add(
    HttpApiEndpoint.patch("updateSettings", "/api/settings")
      .setPayload(SettingsPatch)
      .addSuccess(SettingsInfo)
      .addError(NotFoundResponse)
      .annotateContext(OpenApi.annotations({
        summary: "Update Settings",
        description: "Changes the fields sent and keeps the others; null clears a nullable field. " +
          "active_llm_profile loads that profile's LLM values first, then any llm_* field of the same request " +
          "applies on top. An unknown profile is a 404 and changes nothing. LLM values are checked as for " +
          "LLM profiles (422)."
      }))
  )
  .middleware(Authentication)
  .annotateContext(OpenApi.annotations({ title: "Settings", description: "The caller's own settings" }))
{}
