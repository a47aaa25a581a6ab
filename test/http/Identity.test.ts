import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type { UserId } from "../../src/domain/Identity.js"
import { hashSecret } from "../../src/domain/Secrets.js"
import { IdentityStore } from "../../src/storage/IdentityStore.js"
import { ADMIN_KEY, call, captureLogs, send, testServer } from "../support/TestServer.js"

const createKey = (token: string, body: Record<string, unknown> = {}) =>
  Effect.map(call("POST", "/api/keys", { token, body: { name: "test", ...body } }), ({ body, status }) => {
    expect(status, JSON.stringify(body)).toBe(201)
    return body as { id: string; key: string; org_id: string | null; user_id: string }
  })

/** The `default` organisation's id, as the bootstrap key sees it. */
const defaultOrg = Effect.map(call("POST", "/api/keys", { token: ADMIN_KEY, body: { name: "probe" } }), ({ body }) => {
  expect(body.org_id).toBeTruthy()
  return body.org_id as string
})

const provision = (token: string, body: Record<string, unknown>, orgId?: string) =>
  call("POST", "/api/organizations/provision-user", { token, body, ...(orgId ? { orgId } : {}) })

/** A member of `default` with a key bound to it. */
const member = Effect.gen(function*() {
  const { body } = yield* provision(ADMIN_KEY, {
    email: `member.${crypto.randomUUID().slice(0, 8)}@example.com`,
    issue_api_key: true
  })
  return body as { user_id: string; org_id: string; api_key: string }
})

describe("credentials", () => {
  it.live("X-Access-Token, Authorization: Bearer and, in saas mode, the api_key cookie are each accepted", () =>
    Effect.gen(function*() {
      for (const options of [{ token: ADMIN_KEY }, { bearer: ADMIN_KEY }, { cookie: ADMIN_KEY }]) {
        const { body, status } = yield* call("GET", "/api/keys/current", options)
        expect(status, JSON.stringify(options)).toBe(200)
        expect(body.name).toBe("bootstrap")
        expect(body.org_id).toBeNull()
      }
    }).pipe(Effect.provide(testServer({ HANGAR_APP_MODE: "saas" }))))

  it.live("the cookie is refused in oss mode", () =>
    Effect.gen(function*() {
      expect(yield* call("GET", "/api/keys/current", { cookie: ADMIN_KEY })).toEqual({
        status: 401,
        body: { detail: "Not authenticated" }
      })
    }).pipe(Effect.provide(testServer())))

  it.live("missing, unknown, expired and not-yet-valid keys are 401", () =>
    Effect.gen(function*() {
      expect(yield* call("GET", "/api/keys/current")).toEqual({ status: 401, body: { detail: "Not authenticated" } })
      expect(yield* call("GET", "/api/keys/current", { token: "hgr_not-a-key-of-ours" })).toEqual({
        status: 401,
        body: { detail: "Invalid API key" }
      })
      const now = yield* DateTime.now
      const soon = yield* createKey(ADMIN_KEY, { expires_at: DateTime.formatIso(DateTime.add(now, { millis: 1500 })) })
      const later = yield* createKey(ADMIN_KEY, { not_before: DateTime.formatIso(DateTime.add(now, { hours: 1 })) })
      expect((yield* call("GET", "/api/keys/current", { token: soon.key })).status).toBe(200)
      expect(yield* call("GET", "/api/keys/current", { token: later.key })).toEqual({
        status: 401,
        body: { detail: "API key is not valid yet" }
      })
      yield* Effect.sleep("1600 millis")
      expect(yield* call("GET", "/api/keys/current", { token: soon.key })).toEqual({
        status: 401,
        body: { detail: "API key has expired" }
      })
    }).pipe(Effect.provide(testServer())))

  it.live("the first credential present wins: a bad X-Access-Token is not rescued by a good bearer", () =>
    Effect.gen(function*() {
      const response = yield* call("GET", "/api/keys/current", { token: "hgr_wrong", bearer: ADMIN_KEY })
      expect(response).toEqual({ status: 401, body: { detail: "Invalid API key" } })
      expect((yield* call("GET", "/api/keys/current", { token: ADMIN_KEY, bearer: "hgr_wrong" })).status).toBe(200)
    }).pipe(Effect.provide(testServer())))

  it.live("a created key works at once; a deleted key is refused at once", () =>
    Effect.gen(function*() {
      const created = yield* createKey(ADMIN_KEY, { name: "short-lived" })
      expect(created.key).toMatch(/^hgr_/)
      const current = yield* call("GET", "/api/keys/current", { token: created.key })
      expect(current.body).toEqual({ id: created.id, name: "short-lived", org_id: created.org_id, user_id: created.user_id })
      expect((yield* call("DELETE", `/api/keys/${created.id}`, { token: ADMIN_KEY })).status).toBe(204)
      expect(yield* call("GET", "/api/keys/current", { token: created.key })).toEqual({
        status: 401,
        body: { detail: "Invalid API key" }
      })
      expect(yield* call("DELETE", `/api/keys/${created.id}`, { token: ADMIN_KEY })).toEqual({
        status: 404,
        body: { detail: "API key not found" }
      })
    }).pipe(Effect.provide(testServer())))
})

describe("API keys", () => {
  it.live("lists the caller's keys without secrets, with last_used_at; another user's key is 404", () =>
    Effect.gen(function*() {
      const { api_key: memberKey } = yield* member
      const created = yield* createKey(memberKey, { name: "mine" })
      yield* call("GET", "/api/keys/current", { token: created.key })
      const { body, status } = yield* call("GET", "/api/keys", { token: memberKey })
      expect(status).toBe(200)
      expect(body.map((key: any) => key.name)).toEqual(["provisioned", "mine"])
      const mine = body.find((key: any) => key.id === created.id)
      expect(Object.keys(mine).sort()).toEqual(
        ["created_at", "expires_at", "id", "key_prefix", "last_used_at", "name", "not_before", "org_id", "user_id"]
      )
      expect(mine.key_prefix).toBe(created.key.slice(0, 8))
      expect(mine.last_used_at).not.toBeNull()
      // The admin cannot delete the member's key through the keys API: it is not theirs.
      expect((yield* call("DELETE", `/api/keys/${created.id}`, { token: ADMIN_KEY })).status).toBe(404)
      expect((yield* call("GET", "/api/keys/current", { token: created.key })).status).toBe(200)
    }).pipe(Effect.provide(testServer())))

  it.live("refuses an expiry in the past or before not_before, and unknown fields, with 422", () =>
    Effect.gen(function*() {
      const past = yield* call("POST", "/api/keys", {
        token: ADMIN_KEY,
        body: { name: "x", expires_at: "2020-01-01T00:00:00Z" }
      })
      expect(past.status).toBe(422)
      expect(past.body.detail).toEqual([{
        loc: ["body", "expires_at"],
        msg: "Value error, expires_at must be in the future",
        type: "value_error",
        input: "2020-01-01T00:00:00.000Z",
        ctx: {}
      }])
      const inverted = yield* call("POST", "/api/keys", {
        token: ADMIN_KEY,
        body: { name: "x", not_before: "2099-01-02T00:00:00Z", expires_at: "2099-01-01T00:00:00Z" }
      })
      expect(inverted.body.detail[0]).toMatchObject({ loc: ["body", "expires_at"], type: "value_error" })
      const extra = yield* call("POST", "/api/keys", { token: ADMIN_KEY, body: { name: "x", scope: "all" } })
      expect(extra.body.detail).toEqual([
        { loc: ["body", "scope"], msg: "Extra inputs are not permitted", type: "extra_forbidden", input: "all", ctx: {} }
      ])
      const both = yield* call("POST", "/api/keys", { token: ADMIN_KEY, body: { name: "x", unbound: true, org_id: "o" } })
      expect(both.body.detail[0]).toMatchObject({ loc: ["body", "org_id"], type: "value_error" })
      const missing = yield* call("POST", "/api/keys", { token: ADMIN_KEY, body: {} })
      expect(missing.body.detail[0]).toMatchObject({ loc: ["body", "name"], type: "missing" })
    }).pipe(Effect.provide(testServer())))

  it.live("a key bound to an organisation creates only keys bound to it", () =>
    Effect.gen(function*() {
      const { api_key: memberKey, org_id } = yield* member
      const bound = yield* createKey(memberKey)
      expect(bound.org_id).toBe(org_id)
      expect(yield* call("POST", "/api/keys", { token: memberKey, body: { name: "x", unbound: true } })).toEqual({
        status: 403,
        body: { detail: "A key bound to an organization can only create keys bound to it" }
      })
      const unbound = yield* createKey(ADMIN_KEY, { unbound: true })
      expect(unbound.org_id).toBeNull()
    }).pipe(Effect.provide(testServer())))
})

describe("organisations and permissions", () => {
  it.live("reports the caller's membership; 403 for an organisation they are not in, 404 for an unknown one", () =>
    Effect.gen(function*() {
      const orgId = yield* defaultOrg
      const admin = yield* call("GET", `/organizations/${orgId}/me`, { token: ADMIN_KEY })
      expect(admin.status).toBe(200)
      expect(admin.body).toMatchObject({ org_id: orgId, role: "owner", permissions: ["VIEW_ORG_SETTINGS", "EDIT_ORG_SETTINGS"] })
      const { api_key: memberKey, user_id } = yield* member
      expect((yield* call("GET", `/organizations/${orgId}/me`, { token: memberKey })).body).toEqual({
        org_id: orgId,
        user_id,
        role: "member",
        permissions: ["VIEW_ORG_SETTINGS"]
      })
      const store = yield* IdentityStore
      const elsewhere = yield* store.createOrganization("elsewhere")
      expect(yield* call("GET", `/organizations/${elsewhere.id}/me`, { token: ADMIN_KEY })).toEqual({
        status: 403,
        body: { detail: "Not a member of this organization" }
      })
      expect(yield* call("GET", "/organizations/no-such-org/me", { token: ADMIN_KEY })).toEqual({
        status: 404,
        body: { detail: "Organization not found" }
      })
    }).pipe(Effect.provide(testServer())))

  it.live("a member (VIEW only) calling an EDIT endpoint gets 403", () =>
    Effect.gen(function*() {
      const { api_key: memberKey } = yield* member
      expect(yield* provision(memberKey, { email: "someone@example.com" })).toEqual({
        status: 403,
        body: { detail: "This requires the EDIT_ORG_SETTINGS permission" }
      })
    }).pipe(Effect.provide(testServer())))

  it.live("provision-user twice gives the same user_id and one membership", () =>
    Effect.gen(function*() {
      const orgId = yield* defaultOrg
      const first = yield* provision(ADMIN_KEY, { email: "Grace@Example.com", role: "admin" })
      expect(first).toEqual({ status: 200, body: { user_id: first.body.user_id, org_id: orgId, role: "admin", created: true } })
      const second = yield* provision(ADMIN_KEY, { email: "grace@example.com", role: "member" })
      expect(second).toEqual({ status: 200, body: { user_id: first.body.user_id, org_id: orgId, role: "admin", created: false } })
      const store = yield* IdentityStore
      expect(yield* store.listMemberships(first.body.user_id as UserId)).toHaveLength(1)
      // Only an owner grants owner.
      const issued = yield* provision(ADMIN_KEY, { email: "grace@example.com", issue_api_key: true })
      expect(issued.body.api_key).toMatch(/^hgr_/)
      expect(yield* provision(issued.body.api_key, { email: "eve@example.com", role: "owner" })).toEqual({
        status: 403,
        body: { detail: "Only an owner can grant the owner role" }
      })
      expect((yield* provision(ADMIN_KEY, { email: "bad-address" })).body.detail[0]).toMatchObject({
        loc: ["body", "email"],
        type: "string_pattern_mismatch"
      })
    }).pipe(Effect.provide(testServer())))

  it.live("X-Org-Id: an unbound key acts in the organisation named; a bound key cannot switch (403)", () =>
    Effect.gen(function*() {
      const store = yield* IdentityStore
      const orgId = yield* defaultOrg
      const other = yield* store.createOrganization("other")
      const adminId = (yield* call("GET", "/api/keys/current", { token: ADMIN_KEY })).body.user_id as UserId
      yield* store.addMembership(other.id, adminId, "owner")

      const inOther = yield* provision(ADMIN_KEY, { email: "x@example.com" }, other.id)
      expect(inOther.body).toMatchObject({ org_id: other.id, created: true })
      const inDefault = yield* provision(ADMIN_KEY, { email: "y@example.com" })
      expect(inDefault.body).toMatchObject({ org_id: orgId, created: true })
      expect(yield* call("GET", "/api/keys/current", { token: ADMIN_KEY, orgId: "not-a-member-here" })).toEqual({
        status: 403,
        body: { detail: "Not a member of this organization" }
      })

      const bound = yield* createKey(ADMIN_KEY)
      expect(bound.org_id).toBe(orgId)
      expect(yield* call("GET", "/api/keys/current", { token: bound.key, orgId: other.id })).toEqual({
        status: 403,
        body: { detail: "This API key is bound to another organization" }
      })
      expect((yield* call("GET", "/api/keys/current", { token: bound.key, orgId })).status).toBe(200)
      expect((yield* call("GET", `/organizations/${other.id}/me`, { token: bound.key })).status).toBe(403)
    }).pipe(Effect.provide(testServer())))
})

describe("the auth rate limiter", () => {
  it.live("refuses the request over a key's limit with 429, its body and headers", () =>
    Effect.gen(function*() {
      for (let i = 0; i < 3; i++) expect((yield* call("GET", "/api/keys/current", { token: ADMIN_KEY })).status).toBe(200)
      const response = yield* send(HttpClientRequest.get("/api/keys/current").pipe(
        HttpClientRequest.setHeader("x-access-token", ADMIN_KEY)
      ))
      expect(response.status).toBe(429)
      const retryAfter = Number(response.headers["retry-after"])
      expect(retryAfter).toBeGreaterThanOrEqual(1)
      expect(retryAfter).toBeLessThanOrEqual(60)
      expect(response.headers["x-ratelimit-limit"]).toBe("3")
      expect(response.headers["x-ratelimit-remaining"]).toBe("0")
      expect(response.headers["x-ratelimit-reset"]).toBe(String(retryAfter))
      expect(yield* response.json).toEqual({
        detail: {
          code: "rate_limited",
          message: `Too many requests: at most 3 per 60 s. Retry in ${retryAfter} s.`,
          limit: 3,
          window_seconds: 60,
          retry_after: retryAfter
        }
      })
    }).pipe(Effect.provide(testServer({ HANGAR_AUTH_RATE_LIMIT: "3/minute" }))))

  it.live("counts failed attempts per client: over the limit, even a valid key is refused", () =>
    Effect.gen(function*() {
      expect((yield* call("GET", "/api/keys/current", { token: "hgr_guess-1" })).status).toBe(401)
      expect((yield* call("GET", "/api/keys/current", { token: "hgr_guess-2" })).status).toBe(401)
      expect((yield* call("GET", "/api/keys/current", { token: "hgr_guess-3" })).status).toBe(429)
      const afterwards = yield* call("GET", "/api/keys/current", { token: ADMIN_KEY })
      expect(afterwards.status).toBe(429)
      expect(afterwards.body.detail.code).toBe("rate_limited")
    }).pipe(Effect.provide(testServer({ HANGAR_AUTH_RATE_LIMIT: "2/minute; 100/hour" }))))

  it.live("is off when HANGAR_AUTH_RATE_LIMIT is empty", () =>
    Effect.gen(function*() {
      const statuses = yield* Effect.all(
        Array.from({ length: 60 }, () => Effect.map(call("GET", "/api/keys/current", { token: ADMIN_KEY }), (r) => r.status)),
        { concurrency: 10 }
      )
      expect(new Set(statuses)).toEqual(new Set([200]))
      const failures = yield* Effect.all(
        Array.from({ length: 30 }, () => Effect.map(call("GET", "/api/keys/current", { token: "hgr_nope" }), (r) => r.status))
      )
      expect(new Set(failures)).toEqual(new Set([401]))
    }).pipe(Effect.provide(testServer({ HANGAR_AUTH_RATE_LIMIT: "" }))))
})

describe("secrets", () => {
  const logs = captureLogs()

  it.live("no API key or key hash appears in a log line, or in any response after creation", () =>
    Effect.gen(function*() {
      const created = yield* createKey(ADMIN_KEY, { name: "watched" })
      const { api_key: memberKey } = yield* member
      const secrets = [ADMIN_KEY, created.key, memberKey]
      const bodies: Array<unknown> = []
      for (const options of [{ token: created.key }, { bearer: created.key }, { cookie: created.key }, { token: memberKey }]) {
        bodies.push((yield* call("GET", "/api/keys/current", options)).body)
        bodies.push((yield* call("GET", "/api/keys", options)).body)
      }
      bodies.push((yield* call("GET", "/api/keys/current", { token: `${created.key}x` })).body)
      bodies.push((yield* call("GET", "/api/keys/current", { token: created.key, orgId: "elsewhere" })).body)
      bodies.push((yield* call("DELETE", `/api/keys/${created.id}`, { token: ADMIN_KEY })).body)
      bodies.push((yield* call("GET", "/api/keys/current", { token: created.key })).body)

      // The run was logged: one line per request at least.
      expect(logs.lines.filter((line) => JSON.parse(line).msg === "request").length).toBeGreaterThanOrEqual(12)
      const everything = [...logs.lines, ...bodies.map((body) => JSON.stringify(body))].join("\n")
      for (const secret of secrets) {
        expect(everything).not.toContain(secret)
        expect(everything).not.toContain(secret.slice(4))
        expect(everything).not.toContain(hashSecret(secret))
      }
    }).pipe(Effect.provide(testServer({ HANGAR_APP_MODE: "saas", HANGAR_AUTH_RATE_LIMIT: "100/minute" }, undefined, logs.layer))))
})
