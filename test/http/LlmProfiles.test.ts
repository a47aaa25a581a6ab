import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { sqlBackends } from "../support/Databases.js"
import { ADMIN_KEY, call, captureLogs, testServer } from "../support/TestServer.js"

const unique = () => crypto.randomUUID().slice(0, 8)
const MASK = "**********"

/** A fresh user of `default` with a key, so tests sharing a server do not share profiles. */
const newUser = Effect.suspend(() =>
  Effect.map(
    call("POST", "/api/organizations/provision-user", {
      token: ADMIN_KEY,
      body: { email: `user.${unique()}@example.com`, issue_api_key: true }
    }),
    ({ body }) => body.api_key as string
  )
)

const saveLlm = (token: string, name: string, body: Record<string, unknown>) =>
  call("POST", `/api/profiles/${name}`, { token, body })

const validate = (token: string, name: string, body: Record<string, unknown>, query = "") =>
  call("POST", `/api/profiles/${name}/validate${query}`, { token, body })

/** A local HTTP server for the probe to find, closed with the test's scope. */
const localServer = (handler: (request: IncomingMessage, response: ServerResponse) => void) =>
  Effect.acquireRelease(
    Effect.async<ReturnType<typeof createServer>>((resume) => {
      const server = createServer(handler)
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) => Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
  ).pipe(Effect.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`))

describe("LLM profiles", () => {
  it.live("create (201), read, replace (200) keeping the key unless one is sent; keys are always masked", () =>
    Effect.gen(function*() {
      const token = yield* newUser
      const created = yield* saveLlm(token, "work", {
        model: "openai/gpt-4o",
        base_url: "https://llm.example.com/v1",
        api_key: "sk-work-0123456789",
        temperature: 0.2,
        max_output_tokens: 4096
      })
      expect(created.status).toBe(201)
      expect(created.body).toEqual({
        name: "work",
        model: "openai/gpt-4o",
        base_url: "https://llm.example.com/v1",
        api_key: MASK,
        api_version: null,
        temperature: 0.2,
        max_output_tokens: 4096,
        created_at: expect.any(String),
        updated_at: expect.any(String)
      })
      expect(yield* call("GET", "/api/profiles", { token })).toEqual({ status: 200, body: [created.body] })
      expect(yield* call("GET", "/api/profiles/work", { token })).toEqual({ status: 200, body: created.body })

      // Left out, or sent back masked: the stored key stays (and an openai model needs it).
      const kept = yield* saveLlm(token, "work", { model: "openai/gpt-4o-mini" })
      expect(kept.status).toBe(200)
      expect(kept.body).toMatchObject({ model: "openai/gpt-4o-mini", api_key: MASK, base_url: null, created_at: created.body.created_at })
      expect((yield* saveLlm(token, "work", { model: "openai/gpt-4o", api_key: MASK })).body.api_key).toBe(MASK)
      // null removes it, which only a local model can do without.
      const refused = yield* saveLlm(token, "work", { model: "openai/gpt-4o", api_key: null })
      expect(refused.status).toBe(422)
      const local = yield* saveLlm(token, "work", { model: "ollama/llama3:8b", api_key: null })
      expect(local).toMatchObject({ status: 200, body: { model: "ollama/llama3:8b", api_key: null } })

      expect(yield* call("DELETE", "/api/profiles/work", { token })).toEqual({ status: 200, body: { name: "work", deleted: true } })
      expect(yield* call("DELETE", "/api/profiles/work", { token })).toEqual({ status: 200, body: { name: "work", deleted: false } })
      expect(yield* call("GET", "/api/profiles/work", { token })).toEqual({ status: 404, body: { detail: "LLM profile not found" } })
    }).pipe(Effect.provide(testServer())))

  it.live("are each user's own", () =>
    Effect.gen(function*() {
      const alice = yield* newUser
      const bob = yield* newUser
      expect((yield* saveLlm(alice, "mine", { model: "ollama/llama3" })).status).toBe(201)
      expect((yield* call("GET", "/api/profiles", { token: bob })).body).toEqual([])
      expect((yield* call("GET", "/api/profiles/mine", { token: bob })).status).toBe(404)
      expect((yield* call("DELETE", "/api/profiles/mine", { token: bob })).body.deleted).toBe(false)
      expect((yield* call("GET", "/api/profiles/mine", { token: alice })).status).toBe(200)
    }).pipe(Effect.provide(testServer())))

  it.live("a save that breaks the rules is a 422 with one item per problem, and stores nothing", () =>
    Effect.gen(function*() {
      const token = yield* newUser
      const response = yield* saveLlm(token, "bad", { model: "gpt 4", base_url: "ftp://files.example.com", temperature: 7 })
      expect(response.status).toBe(422)
      expect(response.body.detail.map((item: any) => [item.loc, item.type])).toEqual([
        [["body", "model"], "value_error"],
        [["body", "base_url"], "value_error"],
        [["body", "temperature"], "value_error"]
      ])
      expect(response.body.detail[1]).toEqual({
        loc: ["body", "base_url"],
        msg: "Value error, must be an http or https URL",
        type: "value_error",
        input: "ftp://files.example.com",
        ctx: {}
      })
      expect((yield* call("GET", "/api/profiles", { token })).body).toEqual([])
      const extra = yield* saveLlm(token, "bad", { model: "ollama/x", provider: "ollama" })
      expect(extra.body.detail[0]).toMatchObject({ loc: ["body", "provider"], type: "extra_forbidden" })
      const emptyKey = yield* saveLlm(token, "bad", { model: "openai/gpt-4o", api_key: "" })
      expect(emptyKey.body.detail[0]).toMatchObject({ loc: ["body", "api_key"], type: "string_too_short" })
    }).pipe(Effect.provide(testServer())))

  it.live("HANGAR_MAX_LLM_PROFILES limits each user's profiles: one more is a 409", () =>
    Effect.gen(function*() {
      const token = yield* newUser
      for (const name of ["one", "two"]) expect((yield* saveLlm(token, name, { model: "ollama/llama3" })).status).toBe(201)
      expect(yield* saveLlm(token, "three", { model: "ollama/llama3" })).toEqual({
        status: 409,
        body: { detail: "You already have the maximum of 2 LLM profiles" }
      })
      expect((yield* saveLlm(token, "two", { model: "ollama/mistral" })).status).toBe(200)
      // Another user has a limit of their own.
      expect((yield* saveLlm(yield* newUser, "three", { model: "ollama/llama3" })).status).toBe(201)
    }).pipe(Effect.provide(testServer({ HANGAR_MAX_LLM_PROFILES: "2" }))))
})

describe("LLM profile validation", () => {
  it.live("reports every bad field, and saves nothing", () =>
    Effect.gen(function*() {
      const token = yield* newUser
      expect(yield* validate(token, "draft", {
        model: "openai/gpt-4o",
        base_url: "https://key:secret@llm.example.com",
        temperature: -1,
        max_output_tokens: 1.5
      })).toEqual({
        status: 200,
        body: {
          valid: false,
          errors: [
            { field: "base_url", msg: "must not carry credentials: use api_key" },
            { field: "temperature", msg: "must be between 0 and 2" },
            { field: "max_output_tokens", msg: "must be an integer from 1 to 10000000" },
            {
              field: "api_key",
              msg: "required for a hosted provider (only local models, or a base_url on a local or private network, go without)"
            }
          ]
        }
      })
      const model = yield* validate(token, "draft", { model: "" })
      expect(model.body).toEqual({ valid: false, errors: [{ field: "model", msg: "must not be empty" }] })
      expect((yield* validate(token, "draft", { model: "openai/gpt 4o", api_key: "sk-x" })).body.errors.map((e: any) => e.field))
        .toEqual(["model"])
      // Nothing was stored by any of it.
      expect(yield* call("GET", "/api/profiles", { token })).toEqual({ status: 200, body: [] })
      expect((yield* call("GET", "/api/profiles/draft", { token })).status).toBe(404)
    }).pipe(Effect.provide(testServer())))

  it.live("needs a key for hosted providers only; a stored key counts when the body leaves it out", () =>
    Effect.gen(function*() {
      const token = yield* newUser
      const valid = { status: 200, body: { valid: true, errors: [] } }
      expect(yield* validate(token, "p", { model: "openai/gpt-4o", api_key: "sk-x" })).toEqual(valid)
      expect(yield* validate(token, "p", { model: "ollama/llama3:8b" })).toEqual(valid)
      expect(yield* validate(token, "p", { model: "hosted_vllm/qwen", base_url: "https://vllm.example.com" })).toEqual(valid)
      for (const base_url of ["http://localhost:8000/v1", "http://127.0.0.1:1234", "http://192.168.1.20:8080", "http://[::1]:9000", "http://gpu.local"]) {
        expect(yield* validate(token, "p", { model: "openai/my-model", base_url }), base_url).toEqual(valid)
      }
      expect((yield* validate(token, "p", { model: "anthropic/claude-sonnet-4", base_url: "https://api.example.com" })).body.valid)
        .toBe(false)
      expect((yield* saveLlm(token, "stored", { model: "anthropic/claude-sonnet-4", api_key: "sk-stored" })).status).toBe(201)
      expect(yield* validate(token, "stored", { model: "anthropic/claude-opus-4" })).toEqual(valid)
      expect((yield* validate(token, "stored", { model: "anthropic/claude-opus-4", api_key: null })).body.valid).toBe(false)
      // The stored profile is as it was.
      expect((yield* call("GET", "/api/profiles/stored", { token })).body.model).toBe("anthropic/claude-sonnet-4")
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("with probe=true, base_url must answer HTTP: any status counts, silence and refusal do not", () =>
    Effect.gen(function*() {
      const token = yield* newUser
      const answering = yield* localServer((_, response) => response.writeHead(500).end("broken, but there"))
      const redirecting = yield* localServer((_, response) => response.writeHead(302, { location: "http://10.255.255.1/" }).end())
      const silent = yield* localServer(() => {})
      const probed = (base_url: string, query = "?probe=true") =>
        Effect.map(validate(token, "p", { model: "ollama/llama3", base_url }, query), (response) => response.body)

      expect(yield* probed(answering)).toEqual({ valid: true, errors: [] })
      // A redirect is an answer; it is not followed (nothing answers at its target).
      expect(yield* probed(redirecting)).toEqual({ valid: true, errors: [] })
      // Without probe, nothing is asked.
      expect(yield* probed(silent, "")).toEqual({ valid: true, errors: [] })

      const started = Date.now()
      expect(yield* probed(silent)).toEqual({ valid: false, errors: [{ field: "base_url", msg: "not reachable: no answer within 5 s" }] })
      const waited = Date.now() - started
      expect(waited).toBeGreaterThanOrEqual(4900)
      expect(waited).toBeLessThan(8000)

      const vacated = yield* Effect.scoped(localServer(() => {}))
      expect(yield* probed(vacated)).toEqual({
        valid: false,
        errors: [{ field: "base_url", msg: "not reachable: no answer (ECONNREFUSED)" }]
      })
      // A malformed URL is reported as such and not probed.
      expect(yield* probed("not a url")).toEqual({ valid: false, errors: [{ field: "base_url", msg: "not an absolute URL" }] })
      expect((yield* validate(token, "p", { model: "ollama/llama3", base_url: answering }, "?probe=maybe")).status).toBe(422)
    }).pipe(Effect.provide(testServer())))
})

for (const backend of sqlBackends) {
  layer(testServer({}, backend.storage), { timeout: "120 seconds", excludeTestServices: true })(
    `LLM keys at rest on ${backend.name}`,
    (it) => {
      it.effect("an LLM profile's key, and the settings' key, are unreadable in the database", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const token = yield* newUser
          const profileKey = `sk-profile-${crypto.randomUUID()}`
          const settingsKey = `sk-settings-${crypto.randomUUID()}`
          expect((yield* saveLlm(token, "sealed", { model: "openai/gpt-4o", api_key: profileKey })).status).toBe(201)
          expect((yield* call("PATCH", "/api/settings", { token, body: { active_llm_profile: "sealed" } })).status).toBe(200)
          const other = yield* newUser
          expect((yield* call("PATCH", "/api/settings", { token: other, body: { llm_api_key: settingsKey } })).status).toBe(200)

          const profiles = yield* sql<Record<string, unknown>>`SELECT * FROM llm_profiles WHERE name = 'sealed'`
          const settings = yield* sql<Record<string, unknown>>`SELECT * FROM user_settings`
          const dump = JSON.stringify([profiles, settings])
          for (const key of [profileKey, settingsKey]) {
            expect(dump).not.toContain(key)
            expect(dump).not.toContain(key.slice(3))
            expect(dump).not.toContain(Buffer.from(key).toString("base64"))
            expect(dump).not.toContain(Buffer.from(key).toString("base64url"))
          }
          expect(profiles).toHaveLength(1)
          const sealed = /^v1\.[\w-]+\.[\w-]+\.[\w-]+$/
          expect(profiles[0].api_key_sealed).toMatch(sealed)
          const sealedSettings = settings.map((row) => row.llm_api_key_sealed).filter((value) => value !== null)
          expect(sealedSettings).toHaveLength(2)
          for (const value of sealedSettings) expect(value).toMatch(sealed)
          // Loading the profile copied its sealed key, never a clear one.
          expect(sealedSettings).toContain(profiles[0].api_key_sealed)
        }))
    }
  )
}

describe("LLM keys in responses and logs", () => {
  const logs = captureLogs()

  it.live("a key never appears in a response or a log line after it is sent", () =>
    Effect.gen(function*() {
      const token = yield* newUser
      const profileKey = `sk-profile-${crypto.randomUUID()}`
      const settingsKey = `sk-settings-${crypto.randomUUID()}`
      const bodies: Array<unknown> = []
      const record = (response: { status: number; body: unknown }) => Effect.sync(() => bodies.push(response.body))
      yield* Effect.flatMap(saveLlm(token, "k", { model: "openai/gpt-4o", api_key: profileKey }), record)
      yield* Effect.flatMap(saveLlm(token, "k", { model: "openai/gpt-4o-mini" }), record)
      yield* Effect.flatMap(saveLlm(token, "k", { model: "bad model", api_key: profileKey }), record)
      yield* Effect.flatMap(call("GET", "/api/profiles", { token }), record)
      yield* Effect.flatMap(call("GET", "/api/profiles/k", { token }), record)
      yield* Effect.flatMap(validate(token, "k", { model: "bad model", api_key: profileKey }), record)
      yield* Effect.flatMap(call("PATCH", "/api/settings", { token, body: { active_llm_profile: "k" } }), record)
      yield* Effect.flatMap(call("PATCH", "/api/settings", { token, body: { llm_api_key: settingsKey } }), record)
      yield* Effect.flatMap(call("PATCH", "/api/settings", { token, body: { llm_api_key: settingsKey, llm_model: "bad model" } }), record)
      yield* Effect.flatMap(call("GET", "/api/settings", { token }), record)

      expect(bodies.filter((body: any) => body?.api_key === MASK || body?.llm_api_key === MASK).length).toBeGreaterThanOrEqual(5)
      const everything = [...logs.lines, ...bodies.map((body) => JSON.stringify(body))].join("\n")
      for (const key of [profileKey, settingsKey]) {
        expect(everything).not.toContain(key)
        expect(everything).not.toContain(key.slice(3))
      }
    }).pipe(Effect.provide(testServer({}, undefined, logs.layer))))
})
