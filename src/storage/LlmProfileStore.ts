import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { UserId } from "../domain/Identity.js"
import type { LlmFields, LlmProfile } from "../domain/LlmProfile.js"

export type SaveLlmProfileOutcome =
  | { readonly _tag: "Created"; readonly profile: LlmProfile }
  | { readonly _tag: "Replaced"; readonly profile: LlmProfile }
  | { readonly _tag: "LimitReached" }

/**
 * Each user's LLM profiles (SPEC §5). Keys arrive sealed: this store never sees one in clear.
 * Storage failures are defects.
 */
export interface LlmProfileStoreShape {
  /** The user's profiles by name. */
  readonly list: (userId: UserId) => Effect.Effect<ReadonlyArray<LlmProfile>>
  readonly find: (userId: UserId, name: string) => Effect.Effect<Option.Option<LlmProfile>>
  /**
   * Replaces or creates the named profile, creating only while the user holds fewer than `limit`
   * (counted and inserted atomically). `apiKeySealed`: none keeps the stored key (none on create).
   */
  readonly save: (input: {
    readonly userId: UserId
    readonly name: string
    readonly fields: LlmFields
    readonly apiKeySealed: Option.Option<string | null>
    readonly limit: number
  }) => Effect.Effect<SaveLlmProfileOutcome>
  /** Deletes the profile; settings that named it as active keep its values but no longer name it. */
  readonly remove: (userId: UserId, name: string) => Effect.Effect<boolean>
}

export class LlmProfileStore extends Context.Tag("hangar/LlmProfileStore")<LlmProfileStore, LlmProfileStoreShape>() {}
