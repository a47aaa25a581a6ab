import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { IdentityStore } from "../../src/storage/IdentityStore.js"
import { ADMIN_KEY, call, testServer } from "../support/TestServer.js"

const MASK = "**********"

const defaults = {
  llm_model: null,
  llm_base_url: null,
  llm_api_key: null,
  llm_api_version: null,
  llm_temperature: null,
  llm_max_output_tokens: null,
  active_llm_profile: null,
  language: "en",
  confirmation_mode: false
}

const newUser = Effect.suspend(() =>
  Effect.map(
    call("POST", "/api/organizations/provision-user", {
      token: ADMIN_KEY,
      body: { email: `user.${crypto.randomUUID().slice(0, 8)}@example.com`, issue_api_key: true }
    }),
    ({ body }) => body.api_key as string
  )
)

const patch = (token: string, body: Record<string, unknown>) => call("PATCH", "/api/settings", { token, body })
const settingsOf = (token: string) => Effect.map(call("GET", "/api/settings", { token }), ({ body }) => body)

describe("settings", () => {
  it.live("start at the defaults; PATCH changes the fields sent and keeps the others; null clears", () =>
    Effect.gen(function*() {
      const token = yield* newUser
      expect(yield* call("GET", "/api/settings", { token })).toEqual({ status: 200, body: defaults })

      expect(yield* patch(token, { language: "pt-BR" })).toEqual({ status: 200, body: { ...defaults, language: "pt-BR" } })
      expect((yield* patch(token, { confirmation_mode: true })).body).toEqual({
        ...defaults,
        language: "pt-BR",
        confirmation_mode: true
      })
      const withLlm = yield* patch(token, { llm_model: "openai/gpt-4o", llm_api_key: "sk-settings", llm_temperature: 0.5 })
      expect(withLlm.body).toEqual({
        ...defaults,
        language: "pt-BR",
        confirmation_mode: true,
        llm_model: "openai/gpt-4o",
        llm_api_key: MASK,
        llm_temperature: 0.5
      })
      // The mask sent back keeps the key; null clears a field; an empty PATCH changes nothing.
      expect((yield* patch(token, { llm_api_key: MASK, llm_model: null })).body).toMatchObject({ llm_api_key: MASK, llm_model: null })
      expect((yield* patch(token, { llm_api_key: null })).body.llm_api_key).toBeNull()
      const before = yield* settingsOf(token)
      expect(yield* patch(token, {})).toEqual({ status: 200, body: before })
      expect(yield* settingsOf(token)).toEqual(before)
    }).pipe(Effect.provide(testServer())))

  it.live("refuses unknown fields, null where a value is required, and bad LLM values, changing nothing", () =>
    Effect.gen(function*() {
      const token = yield* newUser
      const unknown = yield* patch(token, { theme: "dark" })
      expect(unknown).toEqual({
        status: 422,
        body: { detail: [{ loc: ["body", "theme"], msg: "Extra inputs are not permitted", type: "extra_forbidden", input: "dark", ctx: {} }] }
      })
      const nulls = yield* patch(token, { language: null, confirmation_mode: null })
      expect(nulls.status).toBe(422)
      expect(nulls.body.detail.map((item: any) => item.loc)).toEqual([["body", "language"], ["body", "confirmation_mode"]])
      const llm = yield* patch(token, { llm_base_url: "nope", llm_temperature: 5, llm_max_output_tokens: 0, language: "fr" })
      expect(llm.status).toBe(422)
      expect(llm.body.detail).toEqual([
        { loc: ["body", "llm_base_url"], msg: "Value error, not an absolute URL", type: "value_error", input: "nope", ctx: {} },
        { loc: ["body", "llm_temperature"], msg: "Value error, must be between 0 and 2", type: "value_error", input: 5, ctx: {} },
        {
          loc: ["body", "llm_max_output_tokens"],
          msg: "Value error, must be an integer from 1 to 10000000",
          type: "value_error",
          input: 0,
          ctx: {}
        }
      ])
      expect(yield* settingsOf(token)).toEqual(defaults)
    }).pipe(Effect.provide(testServer())))

  it.live("active_llm_profile loads that profile's LLM values; an unknown profile is a 404 and changes nothing", () =>
    Effect.gen(function*() {
      const token = yield* newUser
      const profile = {
        model: "azure/gpt-4o",
        base_url: "https://example.openai.azure.com",
        api_key: "sk-azure",
        api_version: "2024-06-01",
        temperature: 0.1,
        max_output_tokens: 2048
      }
      expect((yield* call("POST", "/api/profiles/work", { token, body: profile })).status).toBe(201)
      yield* patch(token, { language: "de" })

      const loaded = yield* patch(token, { active_llm_profile: "work" })
      const expected = {
        ...defaults,
        language: "de",
        llm_model: "azure/gpt-4o",
        llm_base_url: "https://example.openai.azure.com",
        llm_api_key: MASK,
        llm_api_version: "2024-06-01",
        llm_temperature: 0.1,
        llm_max_output_tokens: 2048,
        active_llm_profile: "work"
      }
      expect(loaded).toEqual({ status: 200, body: expected })

      expect(yield* patch(token, { active_llm_profile: "missing", language: "it" })).toEqual({
        status: 404,
        body: { detail: "LLM profile not found" }
      })
      expect(yield* settingsOf(token)).toEqual(expected)

      // The request's own llm_* fields apply on top of the profile's.
      expect((yield* patch(token, { active_llm_profile: "work", llm_temperature: 0.9 })).body).toEqual({
        ...expected,
        llm_temperature: 0.9
      })
      // null forgets which profile was loaded, keeping its values.
      expect((yield* patch(token, { active_llm_profile: null })).body).toEqual({
        ...expected,
        llm_temperature: 0.9,
        active_llm_profile: null
      })
      // Deleting the active profile does the same.
      yield* patch(token, { active_llm_profile: "work" })
      yield* call("DELETE", "/api/profiles/work", { token })
      expect(yield* settingsOf(token)).toEqual({ ...expected, active_llm_profile: null })
    }).pipe(Effect.provide(testServer())))

  it.live("are each user's own, and the same in every organisation of the user", () =>
    Effect.gen(function*() {
      const alice = yield* newUser
      const bob = yield* newUser
      yield* patch(alice, { language: "fr" })
      expect(yield* settingsOf(bob)).toEqual(defaults)
      // Another user's profile cannot be loaded.
      yield* call("POST", "/api/profiles/bobs", { token: bob, body: { model: "ollama/llama3" } })
      expect((yield* patch(alice, { active_llm_profile: "bobs" })).status).toBe(404)

      const identity = yield* IdentityStore
      const other = yield* identity.createOrganization("elsewhere")
      const { body: me } = yield* call("GET", "/api/keys/current", { token: ADMIN_KEY })
      yield* identity.addMembership(other.id, me.user_id, "member")
      yield* patch(ADMIN_KEY, { confirmation_mode: true })
      expect(yield* call("GET", "/api/settings", { token: ADMIN_KEY, orgId: other.id })).toEqual({
        status: 200,
        body: { ...defaults, confirmation_mode: true }
      })
    }).pipe(Effect.provide(testServer())))

  it.live("need a credential", () =>
    Effect.gen(function*() {
      expect(yield* call("GET", "/api/settings")).toEqual({ status: 401, body: { detail: "Not authenticated" } })
      expect(yield* call("PATCH", "/api/settings", { body: { language: "fr" } })).toEqual({
        status: 401,
        body: { detail: "Not authenticated" }
      })
      expect((yield* call("GET", "/api/profiles")).status).toBe(401)
    }).pipe(Effect.provide(testServer())))
})
