import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { HangarApi } from "../Api.js"
import {
  LlmProfileDeleted,
  LlmProfileInfo,
  LlmProfileProblem,
  type LlmProfileRequest,
  LlmProfileValidation,
  MASKED_SECRET
} from "../api/LlmProfilesApi.js"
import { CurrentPrincipal } from "../api/Security.js"
import type { LlmProfile } from "../domain/LlmProfile.js"
import { type LlmProfileInput, LlmProfiles } from "../services/LlmProfiles.js"
import { answerCreated } from "./Created.js"
import { bodyValueErrors } from "./ValidationDetail.js"

const fieldsOf = (profile: LlmProfile) => ({
  name: profile.name,
  model: profile.model,
  base_url: profile.base_url,
  api_key: profile.api_key_sealed === null ? null : MASKED_SECRET,
  api_version: profile.api_version,
  temperature: profile.temperature,
  max_output_tokens: profile.max_output_tokens,
  created_at: profile.created_at,
  updated_at: profile.updated_at
})

/** A key left out, or the mask a client read and sent back, keeps the stored key. */
const inputOf = ({ api_key, ...fields }: LlmProfileRequest): LlmProfileInput => ({
  ...fields,
  apiKey: api_key === undefined || api_key === MASKED_SECRET ? Option.none() : Option.some(api_key)
})

export const LlmProfilesHttpLive = HttpApiBuilder.group(HangarApi, "llmProfiles", (handlers) =>
  Effect.gen(function*() {
    const profiles = yield* LlmProfiles
    const caller = Effect.map(CurrentPrincipal, (principal) => principal.userId)
    return handlers
      .handle("listLlmProfiles", () =>
        Effect.map(Effect.flatMap(caller, profiles.list), (all) => all.map((profile) => LlmProfileInfo.make(fieldsOf(profile)))))
      .handle("getLlmProfile", ({ path }) =>
        Effect.map(Effect.flatMap(caller, (userId) => profiles.get(userId, path.name)), (profile) => LlmProfileInfo.make(fieldsOf(profile))))
      .handle("saveLlmProfile", ({ path, payload }) =>
        Effect.gen(function*() {
          const { created, profile } = yield* profiles.save(yield* caller, path.name, inputOf(payload)).pipe(
            Effect.catchTag("InvalidFields", ({ problems }) => Effect.fail(bodyValueErrors(problems)))
          )
          if (created) yield* answerCreated
          return LlmProfileInfo.make(fieldsOf(profile))
        }))
      .handle("deleteLlmProfile", ({ path }) =>
        Effect.gen(function*() {
          return LlmProfileDeleted.make({ name: path.name, deleted: yield* profiles.remove(yield* caller, path.name) })
        }))
      .handle("validateLlmProfile", ({ path, payload, urlParams }) =>
        Effect.gen(function*() {
          const problems = yield* profiles.validate(yield* caller, path.name, inputOf(payload), { probe: urlParams.probe })
          return LlmProfileValidation.make({
            valid: problems.length === 0,
            errors: problems.map(({ field, msg }) => LlmProfileProblem.make({ field, msg }))
          })
        }))
  }))
