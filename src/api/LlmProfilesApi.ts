import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { ProfileName } from "../domain/Profiles.js"
import { Timestamp } from "../domain/Timestamp.js"
import { optionalNullable, requestBody } from "./Bodies.js"
import { ConflictResponse, NotFoundResponse } from "./Errors.js"
import { Authentication } from "./Security.js"

/** What a stored secret reads as: it is there, and that is all anyone learns of it. */
export const MASKED_SECRET = "**********" as const

export const MaskedSecret = Schema.NullOr(Schema.Literal(MASKED_SECRET)).annotations({
  description: `Write-only: "${MASKED_SECRET}" when a key is stored, null when none is`
})

export const llmFieldDescriptions = {
  model: "The model, provider first: openai/gpt-4o, anthropic/claude-sonnet-4, ollama/llama3:8b",
  base_url: "The provider's endpoint (http or https, no credentials); null: the provider's default",
  api_version: "The provider's API version, where it has one (Azure)",
  temperature: "0 to 2",
  max_output_tokens: "1 to 10000000"
}

export class LlmProfileRequest extends Schema.Class<LlmProfileRequest>("LlmProfileRequest")({
  model: Schema.String.annotations({ description: llmFieldDescriptions.model }),
  base_url: optionalNullable(Schema.String.pipe(Schema.maxLength(2048))).annotations({ description: llmFieldDescriptions.base_url }),
  // No length cap: a 422 would echo an over-long key back.
  api_key: Schema.optionalWith(Schema.NullOr(Schema.String.pipe(Schema.minLength(1))), { exact: true }).annotations({
    description: `Write-only, stored encrypted. Left out (or sent back as "${MASKED_SECRET}"): the stored key is kept; ` +
      "null: removed."
  }),
  api_version: optionalNullable(Schema.String.pipe(Schema.maxLength(64))).annotations({
    description: llmFieldDescriptions.api_version
  }),
  temperature: optionalNullable(Schema.Number).annotations({ description: llmFieldDescriptions.temperature }),
  max_output_tokens: optionalNullable(Schema.Number).annotations({ description: llmFieldDescriptions.max_output_tokens })
}, requestBody("LlmProfileRequest")) {}

export class LlmProfileInfo extends Schema.Class<LlmProfileInfo>("LlmProfile")({
  name: ProfileName,
  model: Schema.String,
  base_url: Schema.NullOr(Schema.String),
  api_key: MaskedSecret,
  api_version: Schema.NullOr(Schema.String),
  temperature: Schema.NullOr(Schema.Number),
  max_output_tokens: Schema.NullOr(Schema.Number),
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

export class LlmProfileDeleted extends Schema.Class<LlmProfileDeleted>("LlmProfileDeleted")({
  name: ProfileName,
  deleted: Schema.Boolean.annotations({ description: "false: there was no such profile (deleting is idempotent)" })
}) {}

export class LlmProfileProblem extends Schema.Class<LlmProfileProblem>("LlmProfileProblem")({
  field: Schema.String.annotations({ description: "The request field at fault" }),
  msg: Schema.String
}) {}

export class LlmProfileValidation extends Schema.Class<LlmProfileValidation>("LlmProfileValidation")({
  valid: Schema.Boolean,
  errors: Schema.Array(LlmProfileProblem).annotations({ description: "Every problem found; empty when valid" })
}) {}

const byName = Schema.Struct({ name: ProfileName })

export class LlmProfilesApi extends HttpApiGroup.make("llmProfiles")
  .add(
    HttpApiEndpoint.get("listLlmProfiles", "/api/profiles")
      .addSuccess(Schema.Array(LlmProfileInfo))
      .annotateContext(OpenApi.annotations({
        summary: "List LLM Profiles",
        description: "The caller's LLM profiles, by name; keys masked."
      }))
  )
  .add(
    HttpApiEndpoint.get("getLlmProfile", "/api/profiles/:name")
      .setPath(byName)
      .addSuccess(LlmProfileInfo)
      .addError(NotFoundResponse)
      .annotateContext(OpenApi.annotations({ summary: "Get LLM Profile", description: "One of the caller's LLM profiles; key masked." }))
  )
  .add(
    HttpApiEndpoint.post("saveLlmProfile", "/api/profiles/:name")
      .setPath(byName)
      .setPayload(LlmProfileRequest)
      .addSuccess(LlmProfileInfo)
      .addSuccess(LlmProfileInfo, { status: 201 })
      .addError(ConflictResponse)
      .annotateContext(OpenApi.annotations({
        summary: "Save LLM Profile",
        description: "Creates (201) or replaces (200) one of the caller's LLM profiles. The fields must pass the " +
          "checks of the validate endpoint (422 otherwise, one item per problem). The API key is encrypted " +
          "(AES-256-GCM) before it is stored and never returned. Creating beyond HANGAR_MAX_LLM_PROFILES " +
          "profiles is a 409."
      }))
  )
  .add(
    HttpApiEndpoint.del("deleteLlmProfile", "/api/profiles/:name")
      .setPath(byName)
      .addSuccess(LlmProfileDeleted)
      .annotateContext(OpenApi.annotations({
        summary: "Delete LLM Profile",
        description: "Deletes one of the caller's LLM profiles; settings that had it active keep its values but " +
          "no longer name it. Idempotent."
      }))
  )
  .add(
    HttpApiEndpoint.post("validateLlmProfile", "/api/profiles/:name/validate")
      .setPath(byName)
      .setUrlParams(Schema.Struct({
        probe: Schema.optionalWith(Schema.BooleanFromString, { default: () => false })
          .annotations({ description: "Also check that base_url answers HTTP, waiting at most 5 s (default false)" })
      }))
      .setPayload(LlmProfileRequest)
      .addSuccess(LlmProfileValidation)
      .annotateContext(OpenApi.annotations({
        summary: "Validate LLM Profile",
        description: "Checks the profile as saving it would, and saves nothing. Every problem is reported: " +
          "model syntax (provider/model: letters, digits, . _ - : @ +); base_url syntax (http or https, no " +
          "credentials); temperature 0..2; max_output_tokens 1..10000000; and an API key where the provider " +
          "needs one. Hosted providers need a key; local ones (ollama, ollama_chat, lm_studio, hosted_vllm, " +
          "vllm, llamafile) do not, nor does a base_url on this machine or a private network (localhost, " +
          "loopback, RFC 1918, link-local, .local, host.docker.internal). A key left out counts as present " +
          "when the stored profile of this name has one. With probe=true, base_url must also answer HTTP " +
          "within 5 s (any status counts; redirects are not followed)."
      }))
  )
  .middleware(Authentication)
  .annotateContext(OpenApi.annotations({ title: "LLM Profiles", description: "The caller's named LLM configurations" }))
{}
