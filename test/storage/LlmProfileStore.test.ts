import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { LlmFields } from "../../src/domain/LlmProfile.js"
import { IdentityStore } from "../../src/storage/IdentityStore.js"
import { LlmProfileStore } from "../../src/storage/LlmProfileStore.js"
import { SettingsStore } from "../../src/storage/SettingsStore.js"
import { backends } from "../support/Databases.js"

const unique = () => crypto.randomUUID().slice(0, 8)

const fields = (overrides: Partial<LlmFields> = {}): LlmFields => ({
  model: "openai/gpt-4o",
  base_url: null,
  api_version: null,
  temperature: null,
  max_output_tokens: null,
  ...overrides
})

const newUser = Effect.gen(function*() {
  const identity = yield* IdentityStore
  const org = yield* identity.createOrganization(`org-${unique()}`)
  return (yield* identity.provisionUser({ email: `u.${unique()}@example.com`, orgId: org.id, role: "member" })).user.id
})

for (const backend of backends) {
  layer(backend.storage, { timeout: "120 seconds" })(`LlmProfileStore and SettingsStore contract on ${backend.name}`, (it) => {
    it.effect("creates, replaces keeping created_at, and keeps the sealed key unless one is given", () =>
      Effect.gen(function*() {
        const store = yield* LlmProfileStore
        const userId = yield* newUser
        const created = yield* store.save({
          userId,
          name: "fast",
          fields: fields({ temperature: 0.25, max_output_tokens: 4096, base_url: "https://llm.example.com/v1" }),
          apiKeySealed: Option.some("sealed-1"),
          limit: 10
        })
        expect(created._tag).toBe("Created")
        if (created._tag !== "Created") return
        expect(created.profile).toMatchObject({
          user_id: userId,
          name: "fast",
          model: "openai/gpt-4o",
          temperature: 0.25,
          max_output_tokens: 4096,
          base_url: "https://llm.example.com/v1",
          api_key_sealed: "sealed-1"
        })

        const kept = yield* store.save({ userId, name: "fast", fields: fields({ model: "openai/gpt-4o-mini" }), apiKeySealed: Option.none(), limit: 10 })
        expect(kept._tag).toBe("Replaced")
        if (kept._tag !== "Replaced") return
        expect(kept.profile).toMatchObject({ model: "openai/gpt-4o-mini", temperature: null, api_key_sealed: "sealed-1" })
        expect(kept.profile.created_at).toEqual(created.profile.created_at)

        const cleared = yield* store.save({ userId, name: "fast", fields: fields(), apiKeySealed: Option.some(null), limit: 10 })
        expect(cleared._tag === "Replaced" && cleared.profile.api_key_sealed).toBeNull()
        const fresh = yield* store.save({ userId, name: "keyless", fields: fields(), apiKeySealed: Option.none(), limit: 10 })
        expect(fresh._tag === "Created" && fresh.profile.api_key_sealed).toBeNull()

        expect((yield* store.list(userId)).map((p) => p.name)).toEqual(["fast", "keyless"])
        expect(Option.getOrThrow(yield* store.find(userId, "keyless")).model).toBe("openai/gpt-4o")
        expect(yield* store.list(yield* newUser)).toEqual([])
      }))

    it.effect("refuses a create at the limit, even from parallel creates; replaces at the limit", () =>
      Effect.gen(function*() {
        const store = yield* LlmProfileStore
        const userId = yield* newUser
        const outcomes = yield* Effect.all(
          Array.from({ length: 9 }, (_, i) =>
            store.save({ userId, name: `p${i}`, fields: fields(), apiKeySealed: Option.none(), limit: 4 })),
          { concurrency: "unbounded" }
        )
        expect(outcomes.filter((o) => o._tag === "Created")).toHaveLength(4)
        expect(yield* store.list(userId)).toHaveLength(4)
        const existing = (yield* store.list(userId))[0].name
        expect((yield* store.save({ userId, name: existing, fields: fields(), apiKeySealed: Option.none(), limit: 4 }))._tag)
          .toBe("Replaced")
      }))

    it.effect("settings start absent, take partial updates, and keep what is not given", () =>
      Effect.gen(function*() {
        const settings = yield* SettingsStore
        const userId = yield* newUser
        expect(Option.isNone(yield* settings.find(userId))).toBe(true)
        const first = Option.getOrThrow(yield* settings.update(userId, { language: "de" }))
        expect(first).toMatchObject({ user_id: userId, language: "de", confirmation_mode: false, llm_model: null })
        expect(first.updated_at).not.toBeNull()
        const second = Option.getOrThrow(yield* settings.update(userId, { confirmation_mode: true, llm_model: "anthropic/claude" }))
        expect(second).toMatchObject({ language: "de", confirmation_mode: true, llm_model: "anthropic/claude" })
        const cleared = Option.getOrThrow(yield* settings.update(userId, { llm_model: null }))
        expect(cleared).toMatchObject({ language: "de", confirmation_mode: true, llm_model: null })
        expect(Option.getOrThrow(yield* settings.find(userId))).toEqual(cleared)
      }))

    it.effect("concurrent first updates of different fields both land", () =>
      Effect.gen(function*() {
        const settings = yield* SettingsStore
        const userId = yield* newUser
        yield* Effect.all([
          settings.update(userId, { language: "fr" }),
          settings.update(userId, { confirmation_mode: true }),
          settings.update(userId, { llm_api_version: "2024-06-01" })
        ], { concurrency: "unbounded" })
        expect(Option.getOrThrow(yield* settings.find(userId))).toMatchObject({
          language: "fr",
          confirmation_mode: true,
          llm_api_version: "2024-06-01"
        })
      }))

    it.effect("an active profile must be one of the user's; deleting it clears the pointer, not the values", () =>
      Effect.gen(function*() {
        const store = yield* LlmProfileStore
        const settings = yield* SettingsStore
        const userId = yield* newUser
        const other = yield* newUser
        yield* store.save({ userId: other, name: "theirs", fields: fields(), apiKeySealed: Option.none(), limit: 10 })
        expect(yield* settings.update(userId, { active_llm_profile: "theirs", language: "it" })).toEqual(Option.none())
        // Nothing was written, not even the other field.
        expect(Option.isNone(yield* settings.find(userId))).toBe(true)

        yield* store.save({ userId, name: "mine", fields: fields(), apiKeySealed: Option.some("sealed"), limit: 10 })
        const active = Option.getOrThrow(
          yield* settings.update(userId, { active_llm_profile: "mine", llm_model: "openai/gpt-4o", llm_api_key_sealed: "sealed" })
        )
        expect(active.active_llm_profile).toBe("mine")
        expect(yield* settings.update(userId, { active_llm_profile: "theirs" })).toEqual(Option.none())
        expect(Option.getOrThrow(yield* settings.find(userId)).active_llm_profile).toBe("mine")

        expect(yield* store.remove(userId, "mine")).toBe(true)
        expect(yield* store.remove(userId, "mine")).toBe(false)
        expect(Option.getOrThrow(yield* settings.find(userId))).toMatchObject({
          active_llm_profile: null,
          llm_model: "openai/gpt-4o",
          llm_api_key_sealed: "sealed"
        })
        expect(Option.isSome(yield* store.find(other, "theirs"))).toBe(true)
      }))
  })
}
