import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { OrganizationId, UserId } from "../../src/domain/Identity.js"
import { AgentProfileStore } from "../../src/storage/AgentProfileStore.js"
import { IdentityStore } from "../../src/storage/IdentityStore.js"
import { MemoryStorage, type Stores } from "../../src/storage/Storage.js"
import { SettingsStore } from "../../src/storage/SettingsStore.js"
import { sqlBackends } from "../support/Databases.js"
import { ADMIN_KEY, call, testServer } from "../support/TestServer.js"

const unique = () => crypto.randomUUID().slice(0, 8)

/** A member (role member, VIEW_ORG_SETTINGS only) of `default`, with a key bound to it. */
const newMember = Effect.gen(function*() {
  const { body, status } = yield* call("POST", "/api/organizations/provision-user", {
    token: ADMIN_KEY,
    body: { email: `member.${unique()}@example.com`, issue_api_key: true }
  })
  expect(status).toBe(200)
  return body as { user_id: UserId; org_id: OrganizationId; api_key: string }
})

const saveProfile = (name: string, body: Record<string, unknown> = {}, options: { token?: string; orgId?: string } = {}) =>
  call("POST", `/api/agent-profiles/${name}`, { token: ADMIN_KEY, ...options, body })

const createProfile = (name: string, body: Record<string, unknown> = {}, options: { orgId?: string } = {}) =>
  Effect.map(saveProfile(name, body, options), ({ body, status }) => {
    expect(status, JSON.stringify(body)).toBe(201)
    return body as { id: string; name: string; revision: number; updated_at: string; org_id: OrganizationId }
  })

const pointerOf = (token: string) =>
  Effect.map(call("GET", "/api/agent-profiles", { token }), ({ body, status }) => {
    expect(status).toBe(200)
    return body.active_agent_profile_id as string | null
  })

/** A second organisation in which the bootstrap admin is an owner, addressed with `X-Org-Id`. */
const otherOrganization = Effect.gen(function*() {
  const identity = yield* IdentityStore
  const org = yield* identity.createOrganization(`other-${unique()}`)
  const { body } = yield* call("GET", "/api/keys/current", { token: ADMIN_KEY })
  yield* identity.addMembership(org.id, body.user_id, "owner")
  return org.id
})

const activationBackends: ReadonlyArray<{ readonly name: string; readonly storage: Layer.Layer<Stores, unknown> }> = [
  { name: "memory", storage: MemoryStorage },
  ...sqlBackends
]

for (const backend of activationBackends) {
  layer(testServer({}, backend.storage), { timeout: "120 seconds", excludeTestServices: true })(`activation, exactly as the seed, on ${backend.name}`, (it) => {
    /** The profile row as stored: through the port, and as SQL text where there is SQL. */
    const storedRow = (orgId: OrganizationId, name: string, id: string) =>
      Effect.gen(function*() {
        const viaPort = Option.getOrThrow(yield* (yield* AgentProfileStore).findByName(orgId, name))
        const sql = yield* Effect.serviceOption(SqlClient.SqlClient)
        const asText = Option.isSome(sql)
          ? (yield* sql.value<{ row: string }>`SELECT to_jsonb(p)::text AS row FROM agent_profiles p WHERE id = ${id}`)[0].row
          : null
        return { viaPort, asText }
      })

    it.effect("a member (VIEW only) activates: 200 with the exact body; only their pointer changes", () =>
      Effect.gen(function*() {
        const alice = yield* newMember
        const bob = yield* newMember
        const reviewer = yield* createProfile(`reviewer-${unique()}`, { system_message_suffix: "Review carefully." })
        const other = yield* createProfile(`other-${unique()}`)
        expect((yield* call("POST", `/api/agent-profiles/${other.id}/activate`, { token: bob.api_key })).status).toBe(200)
        const adminPointer = yield* pointerOf(ADMIN_KEY)
        const before = yield* storedRow(reviewer.org_id, reviewer.name, reviewer.id)
        const fullBefore = yield* call("GET", `/api/agent-profiles/${reviewer.name}`, { token: ADMIN_KEY })

        const response = yield* call("POST", `/api/agent-profiles/${reviewer.id}/activate`, { token: alice.api_key })
        expect(response).toEqual({
          status: 200,
          body: { id: reviewer.id, message: "Agent profile activated", agent_settings_applied: false }
        })

        // The member's pointer changed, and the member-facing list reports it.
        expect(yield* pointerOf(alice.api_key)).toBe(reviewer.id)
        // The profile is byte-for-byte what it was: row, revision, updated_at.
        const after = yield* storedRow(reviewer.org_id, reviewer.name, reviewer.id)
        expect(after.viaPort).toEqual(before.viaPort)
        expect(after.asText).toBe(before.asText)
        expect(yield* call("GET", `/api/agent-profiles/${reviewer.name}`, { token: ADMIN_KEY })).toEqual(fullBefore)
        expect(fullBefore.body).toMatchObject({ revision: 1, updated_at: reviewer.updated_at })
        // Nobody else's pointer moved, and no settings were written.
        expect(yield* pointerOf(bob.api_key)).toBe(other.id)
        expect(yield* pointerOf(ADMIN_KEY)).toBe(adminPointer)
        expect(Option.isNone(yield* (yield* SettingsStore).find(alice.user_id))).toBe(true)
        expect((yield* call("GET", "/api/agent-profiles", { token: alice.api_key })).body.profiles).toContainEqual({
          id: reviewer.id,
          name: reviewer.name,
          agent_kind: "openhands",
          revision: 1
        })
      }))

    it.effect("an unknown id is a 404, and changes nothing", () =>
      Effect.gen(function*() {
        const member = yield* newMember
        const kept = yield* createProfile(`kept-${unique()}`)
        yield* call("POST", `/api/agent-profiles/${kept.id}/activate`, { token: member.api_key })
        expect(yield* call("POST", `/api/agent-profiles/${crypto.randomUUID()}/activate`, { token: member.api_key })).toEqual({
          status: 404,
          body: { detail: "Agent profile not found" }
        })
        // The longest valid id reaches the handler: its 404, not the router's.
        expect(yield* call("POST", `/api/agent-profiles/${"y".repeat(128)}/activate`, { token: member.api_key })).toEqual({
          status: 404,
          body: { detail: "Agent profile not found" }
        })
        expect(yield* pointerOf(member.api_key)).toBe(kept.id)
      }))

    it.effect("another organisation's profile id is a 404", () =>
      Effect.gen(function*() {
        const member = yield* newMember
        const elsewhere = yield* otherOrganization
        const foreign = yield* createProfile(`foreign-${unique()}`, {}, { orgId: elsewhere })
        expect(foreign.org_id).toBe(elsewhere)
        expect(yield* call("POST", `/api/agent-profiles/${foreign.id}/activate`, { token: member.api_key })).toEqual({
          status: 404,
          body: { detail: "Agent profile not found" }
        })
        // The admin too, acting in `default`: the profile is not of the caller's organisation.
        expect((yield* call("POST", `/api/agent-profiles/${foreign.id}/activate`, { token: ADMIN_KEY })).status).toBe(404)
        expect(yield* pointerOf(member.api_key)).toBeNull()
        // In its own organisation it activates.
        expect((yield* call("POST", `/api/agent-profiles/${foreign.id}/activate`, { token: ADMIN_KEY, orgId: elsewhere })).status)
          .toBe(200)
      }))

    it.effect("no credential is a 401; an invalid id is a 422 in the FastAPI shape", () =>
      Effect.gen(function*() {
        const profile = yield* createProfile(`p-${unique()}`)
        expect(yield* call("POST", `/api/agent-profiles/${profile.id}/activate`)).toEqual({
          status: 401,
          body: { detail: "Not authenticated" }
        })
        const tooLong = "x".repeat(129)
        expect(yield* call("POST", `/api/agent-profiles/${tooLong}/activate`, { token: ADMIN_KEY })).toEqual({
          status: 422,
          body: {
            detail: [{
              loc: ["path", "profile_id"],
              msg: "String should have at most 128 characters",
              type: "string_too_long",
              input: tooLong,
              ctx: { max_length: 128 }
            }]
          }
        })
      }))

    it.effect("the credential may come from X-Access-Token or Authorization: Bearer", () =>
      Effect.gen(function*() {
        const member = yield* newMember
        const a = yield* createProfile(`a-${unique()}`)
        const b = yield* createProfile(`b-${unique()}`)
        expect((yield* call("POST", `/api/agent-profiles/${a.id}/activate`, { token: member.api_key })).status).toBe(200)
        expect(yield* pointerOf(member.api_key)).toBe(a.id)
        expect((yield* call("POST", `/api/agent-profiles/${b.id}/activate`, { bearer: member.api_key })).status).toBe(200)
        expect(yield* pointerOf(member.api_key)).toBe(b.id)
      }))
  })
}

describe("activation in saas mode", () => {
  it.live("takes the credential from the api_key cookie too", () =>
    Effect.gen(function*() {
      const member = yield* newMember
      const profile = yield* createProfile("cookie-picked")
      expect(yield* call("POST", `/api/agent-profiles/${profile.id}/activate`, { cookie: member.api_key })).toEqual({
        status: 200,
        body: { id: profile.id, message: "Agent profile activated", agent_settings_applied: false }
      })
      expect(yield* pointerOf(member.api_key)).toBe(profile.id)
    }).pipe(Effect.provide(testServer({ HANGAR_APP_MODE: "saas" }))))
})

describe("agent profile administration", () => {
  it.live("a member gets 403 on create, replace, rename, delete and the full read, but may list", () =>
    Effect.gen(function*() {
      const member = yield* newMember
      yield* createProfile("existing")
      const forbidden = { status: 403, body: { detail: "This requires the EDIT_ORG_SETTINGS permission" } }
      const token = member.api_key
      expect(yield* call("POST", "/api/agent-profiles/fresh", { token, body: {} })).toEqual(forbidden)
      expect(yield* call("POST", "/api/agent-profiles/existing", { token, body: { system_message_suffix: "x" } })).toEqual(forbidden)
      expect(yield* call("POST", "/api/agent-profiles/existing/rename", { token, body: { new_name: "moved" } })).toEqual(forbidden)
      expect(yield* call("DELETE", "/api/agent-profiles/existing", { token })).toEqual(forbidden)
      expect(yield* call("GET", "/api/agent-profiles/existing", { token })).toEqual(forbidden)

      const listed = yield* call("GET", "/api/agent-profiles", { token })
      expect(listed.status).toBe(200)
      expect(listed.body.profiles.map((p: any) => p.name)).toEqual(["existing"])
      // Nothing the member tried happened.
      const full = yield* call("GET", "/api/agent-profiles/existing", { token: ADMIN_KEY })
      expect(full.body).toMatchObject({ name: "existing", revision: 1, system_message_suffix: null })
      expect((yield* call("GET", "/api/agent-profiles/fresh", { token: ADMIN_KEY })).status).toBe(404)
    }).pipe(Effect.provide(testServer())))

  it.live("creates (201), replaces whole (200, same id, next revision) and reads the full profile", () =>
    Effect.gen(function*() {
      const created = yield* saveProfile("coder", { mcp_server_refs: ["github"], llm_profile_ref: "fast" })
      expect(created.status).toBe(201)
      expect(Object.keys(created.body).sort()).toEqual([
        "acp_args", "acp_command", "acp_model", "acp_server", "agent_kind", "created_at", "id", "llm_profile_ref",
        "mcp_server_refs", "name", "org_id", "revision", "system_message_suffix", "updated_at"
      ])
      expect(created.body).toMatchObject({
        name: "coder",
        agent_kind: "openhands",
        revision: 1,
        mcp_server_refs: ["github"],
        llm_profile_ref: "fast",
        acp_args: []
      })
      const replaced = yield* saveProfile("coder", { agent_kind: "acp", acp_server: "claude-code", acp_args: ["--verbose"] })
      expect(replaced.status).toBe(200)
      expect(replaced.body).toMatchObject({
        id: created.body.id,
        revision: 2,
        agent_kind: "acp",
        acp_server: "claude-code",
        acp_args: ["--verbose"],
        mcp_server_refs: [],
        llm_profile_ref: null,
        created_at: created.body.created_at
      })
      expect(yield* call("GET", "/api/agent-profiles/coder", { token: ADMIN_KEY })).toEqual({ status: 200, body: replaced.body })
      expect(yield* call("GET", "/api/agent-profiles/nobody", { token: ADMIN_KEY })).toEqual({
        status: 404,
        body: { detail: "Agent profile not found" }
      })
    }).pipe(Effect.provide(testServer())))

  it.live("rename keeps the id and moves the name; a taken name is 409, a missing profile 404", () =>
    Effect.gen(function*() {
      const member = yield* newMember
      const profile = yield* createProfile("draft")
      yield* createProfile("taken")
      yield* call("POST", `/api/agent-profiles/${profile.id}/activate`, { token: member.api_key })

      const renamed = yield* call("POST", "/api/agent-profiles/draft/rename", { token: ADMIN_KEY, body: { new_name: "final" } })
      expect(renamed.status).toBe(200)
      expect(renamed.body).toMatchObject({ id: profile.id, name: "final", revision: 2 })
      expect((yield* call("GET", "/api/agent-profiles/draft", { token: ADMIN_KEY })).status).toBe(404)
      expect((yield* call("GET", "/api/agent-profiles/final", { token: ADMIN_KEY })).body.id).toBe(profile.id)
      // The member's choice follows the profile.
      expect(yield* pointerOf(member.api_key)).toBe(profile.id)

      expect(yield* call("POST", "/api/agent-profiles/final/rename", { token: ADMIN_KEY, body: { new_name: "taken" } })).toEqual({
        status: 409,
        body: { detail: "An agent profile named taken already exists" }
      })
      expect(yield* call("POST", "/api/agent-profiles/draft/rename", { token: ADMIN_KEY, body: { new_name: "x" } })).toEqual({
        status: 404,
        body: { detail: "Agent profile not found" }
      })
      const invalid = yield* call("POST", "/api/agent-profiles/final/rename", { token: ADMIN_KEY, body: { new_name: "-bad" } })
      expect(invalid.status).toBe(422)
      expect(invalid.body.detail[0]).toMatchObject({ loc: ["body", "new_name"], type: "string_pattern_mismatch" })
    }).pipe(Effect.provide(testServer())))

  it.live("delete clears every member's pointer to the profile, and is idempotent", () =>
    Effect.gen(function*() {
      const [a, b, c] = [yield* newMember, yield* newMember, yield* newMember]
      const doomed = yield* createProfile("doomed")
      const kept = yield* createProfile("kept")
      for (const member of [a, b]) yield* call("POST", `/api/agent-profiles/${doomed.id}/activate`, { token: member.api_key })
      yield* call("POST", `/api/agent-profiles/${kept.id}/activate`, { token: c.api_key })

      expect(yield* call("DELETE", "/api/agent-profiles/doomed", { token: ADMIN_KEY })).toEqual({
        status: 200,
        body: { name: "doomed", deleted: true }
      })
      expect([yield* pointerOf(a.api_key), yield* pointerOf(b.api_key), yield* pointerOf(c.api_key)]).toEqual([null, null, kept.id])
      expect(yield* call("DELETE", "/api/agent-profiles/doomed", { token: ADMIN_KEY })).toEqual({
        status: 200,
        body: { name: "doomed", deleted: false }
      })
      expect((yield* call("POST", `/api/agent-profiles/${doomed.id}/activate`, { token: a.api_key })).status).toBe(404)
    }).pipe(Effect.provide(testServer())))

  it.live("the 51st profile of an organisation is a 409 (default limit); replacing still works", () =>
    Effect.gen(function*() {
      yield* Effect.all(Array.from({ length: 50 }, (_, i) => createProfile(`p${i}`)), { concurrency: 8 })
      expect(yield* saveProfile("p50")).toEqual({
        status: 409,
        body: { detail: "The organization already has the maximum of 50 agent profiles" }
      })
      expect((yield* saveProfile("p7", { system_message_suffix: "still editable" })).status).toBe(200)
      // The limit is per organisation.
      const elsewhere = yield* otherOrganization
      expect((yield* saveProfile("p50", {}, { orgId: elsewhere })).status).toBe(201)
      yield* call("DELETE", "/api/agent-profiles/p0", { token: ADMIN_KEY })
      expect((yield* saveProfile("p50")).status).toBe(201)
    }).pipe(Effect.provide(testServer())))

  it.live("HANGAR_MAX_AGENT_PROFILES sets the limit, also against parallel creates", () =>
    Effect.gen(function*() {
      const statuses = yield* Effect.all(
        Array.from({ length: 8 }, (_, i) => Effect.map(saveProfile(`q${i}`), (r) => r.status)),
        { concurrency: "unbounded" }
      )
      expect(statuses.filter((s) => s === 201)).toHaveLength(3)
      expect(statuses.filter((s) => s === 409)).toHaveLength(5)
      expect((yield* call("GET", "/api/agent-profiles", { token: ADMIN_KEY })).body.profiles).toHaveLength(3)
    }).pipe(Effect.provide(testServer({ HANGAR_MAX_AGENT_PROFILES: "3" }))))

  it.live("refuses bad names, unknown fields and fields of the other kind with 422", () =>
    Effect.gen(function*() {
      const badName = yield* saveProfile("-starts-with-dash")
      expect(badName.status).toBe(422)
      expect(badName.body.detail).toEqual([{
        loc: ["path", "name"],
        msg: "String should match pattern '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$'",
        type: "string_pattern_mismatch",
        input: "-starts-with-dash",
        ctx: { pattern: "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$" }
      }])
      expect((yield* saveProfile("a".repeat(65))).status).toBe(422)
      expect((yield* saveProfile("a".repeat(64))).status).toBe(201)

      const unknown = yield* saveProfile("ok", { agent_kind: "openhands", temperature: 1 })
      expect(unknown.body.detail).toEqual([
        { loc: ["body", "temperature"], msg: "Extra inputs are not permitted", type: "extra_forbidden", input: 1, ctx: {} }
      ])
      const kind = yield* saveProfile("ok", { agent_kind: "claude" })
      expect(kind.body.detail[0]).toMatchObject({ loc: ["body", "agent_kind"], type: "enum" })

      const acpOnOpenhands = yield* saveProfile("ok", { acp_server: "claude-code", acp_args: ["-v"] })
      expect(acpOnOpenhands).toEqual({
        status: 422,
        body: {
          detail: [
            { loc: ["body", "acp_server"], msg: "Value error, only allowed when agent_kind is 'acp'", type: "value_error", input: "claude-code", ctx: {} },
            { loc: ["body", "acp_args"], msg: "Value error, only allowed when agent_kind is 'acp'", type: "value_error", input: ["-v"], ctx: {} }
          ]
        }
      })
      const acpWithoutServer = yield* saveProfile("ok", { agent_kind: "acp", acp_model: "sonnet" })
      expect(acpWithoutServer.body.detail).toEqual([
        { loc: ["body", "acp_server"], msg: "Value error, required when agent_kind is 'acp'", type: "value_error", input: null, ctx: {} }
      ])
      expect((yield* call("GET", "/api/agent-profiles/ok", { token: ADMIN_KEY })).status).toBe(404)
    }).pipe(Effect.provide(testServer())))
})
