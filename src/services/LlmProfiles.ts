import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Conflict, NotFound } from "../api/Errors.js"
import type { UserId } from "../domain/Identity.js"
import { type FieldProblem, InvalidFields, type LlmFields, type LlmProfile, llmProblems } from "../domain/LlmProfile.js"
import { AppConfig } from "../AppConfig.js"
import { LlmProfileStore } from "../storage/LlmProfileStore.js"
import { probeUrl } from "./Reachability.js"
import { SecretBox } from "./SecretBox.js"

export interface LlmProfileInput extends LlmFields {
  /** The key in clear. None keeps the stored key; null removes it. */
  readonly apiKey: Option.Option<string | null>
}

/** Each user's LLM profiles (SPEC §5). Keys are sealed before they reach storage. */
export interface LlmProfilesShape {
  readonly list: (userId: UserId) => Effect.Effect<ReadonlyArray<LlmProfile>>
  readonly get: (userId: UserId, name: string) => Effect.Effect<LlmProfile, NotFound>
  /** Creates or replaces the profile once it passes `validate`; at most `HANGAR_MAX_LLM_PROFILES` per user. */
  readonly save: (
    userId: UserId,
    name: string,
    input: LlmProfileInput
  ) => Effect.Effect<{ readonly profile: LlmProfile; readonly created: boolean }, Conflict | InvalidFields>
  readonly remove: (userId: UserId, name: string) => Effect.Effect<boolean>
  /** Every problem saving the input would meet, without saving; `probe` also asks `base_url`. */
  readonly validate: (
    userId: UserId,
    name: string,
    input: LlmProfileInput,
    options: { readonly probe: boolean }
  ) => Effect.Effect<ReadonlyArray<FieldProblem>>
}

export class LlmProfiles extends Context.Tag("hangar/LlmProfiles")<LlmProfiles, LlmProfilesShape>() {}

export const LlmProfilesLive = Layer.effect(
  LlmProfiles,
  Effect.gen(function*() {
    const store = yield* LlmProfileStore
    const box = yield* SecretBox
    const { maxLlmProfiles } = yield* AppConfig

    const problems = (userId: UserId, name: string, input: LlmProfileInput) =>
      Effect.map(
        Option.match(input.apiKey, {
          onSome: (key) => Effect.succeed(key !== null),
          // Left out, the stored key stays: it counts.
          onNone: () => Effect.map(store.find(userId, name), Option.exists((stored) => stored.api_key_sealed !== null))
        }),
        (hasApiKey) => llmProblems({ ...input, hasApiKey })
      )

    return {
      list: store.list,
      get: (userId, name) =>
        Effect.flatMap(store.find(userId, name), Option.match({
          onNone: () => Effect.fail(new NotFound({ detail: "LLM profile not found" })),
          onSome: Effect.succeed
        })),
      save: (userId, name, input) =>
        Effect.gen(function*() {
          const found = yield* problems(userId, name, input)
          if (found.length > 0) return yield* new InvalidFields({ problems: found })
          const { apiKey, ...fields } = input
          const outcome = yield* store.save({
            userId,
            name,
            fields,
            apiKeySealed: Option.map(apiKey, (key) => key === null ? null : box.seal(key)),
            limit: maxLlmProfiles
          })
          if (outcome._tag === "LimitReached") {
            return yield* new Conflict({ detail: `You already have the maximum of ${maxLlmProfiles} LLM profiles` })
          }
          return { profile: outcome.profile, created: outcome._tag === "Created" }
        }),
      remove: store.remove,
      validate: (userId, name, input, { probe }) =>
        Effect.gen(function*() {
          const found = yield* problems(userId, name, input)
          const url = input.base_url
          if (!probe || url === null || found.some((problem) => problem.field === "base_url")) return found
          return yield* probeUrl(url).pipe(
            Effect.as(found),
            Effect.catchAll((reason) => Effect.succeed([...found, { field: "base_url", msg: `not reachable: ${reason}`, input: url }]))
          )
        })
    }
  })
)
