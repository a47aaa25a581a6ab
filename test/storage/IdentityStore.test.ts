import { expect, layer } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { ApiKey, type ApiKeyId, type OrganizationId, type UserId } from "../../src/domain/Identity.js"
import { hashSecret } from "../../src/domain/Secrets.js"
import { IdentityStore } from "../../src/storage/IdentityStore.js"
import { backends } from "../support/Databases.js"

// One contract, every backend: the same assertions on memory, PGlite and (with DATABASE_URL)
// Postgres. Tests use fresh names and ids, so they share a database without interfering.

const unique = () => crypto.randomUUID().slice(0, 8)

const newKey = (userId: UserId, orgId: OrganizationId | null, overrides: Partial<ApiKey> = {}) => {
  const secret = `hgr_${crypto.randomUUID()}`
  return {
    secret,
    key: ApiKey.make({
      id: crypto.randomUUID() as ApiKeyId,
      name: `key-${unique()}`,
      user_id: userId,
      org_id: orgId,
      key_hash: hashSecret(secret),
      key_prefix: secret.slice(0, 8),
      created_at: DateTime.unsafeNow(),
      last_used_at: null,
      not_before: null,
      expires_at: null,
      ...overrides
    })
  }
}

for (const backend of backends) {
  layer(backend.storage, { timeout: "120 seconds" })(`IdentityStore contract on ${backend.name}`, (it) => {
    it.effect("bootstraps an empty database once, and ensures a given key idempotently", () =>
      Effect.gen(function*() {
        const store = yield* IdentityStore
        expect(yield* store.isEmpty).toBe(true)
        const first = newKey("unused" as UserId, null).key
        const created = Option.getOrThrow(yield* store.bootstrap({ key: first, onlyIfEmpty: true }))
        expect(created.keyCreated).toBe(true)
        expect(created.organization.name).toBe("default")
        expect(created.user.name).toBe("admin")
        expect(yield* store.isEmpty).toBe(false)

        // A second bootstrap of an empty database finds it no longer empty.
        expect(Option.isNone(yield* store.bootstrap({ key: newKey("unused" as UserId, null).key, onlyIfEmpty: true })))
          .toBe(true)

        // Ensuring the same key again changes nothing; another key joins the same owner.
        const again = Option.getOrThrow(yield* store.bootstrap({ key: first, onlyIfEmpty: false }))
        expect(again.keyCreated).toBe(false)
        expect(again.organization.id).toBe(created.organization.id)
        expect(again.user.id).toBe(created.user.id)
        const other = newKey("unused" as UserId, null).key
        const third = Option.getOrThrow(yield* store.bootstrap({ key: other, onlyIfEmpty: false }))
        expect(third.keyCreated).toBe(true)
        expect(third.user.id).toBe(created.user.id)

        const stored = Option.getOrThrow(yield* store.findApiKeyByHash(first.key_hash))
        expect(stored.user_id).toBe(created.user.id)
        expect(stored.org_id).toBeNull()
        const membership = Option.getOrThrow(yield* store.findMembership(created.organization.id, created.user.id))
        expect(membership.role).toBe("owner")
        expect(yield* store.listMemberships(created.user.id)).toHaveLength(1)
      }))

    it.effect("provisions a user idempotently by email, case-insensitively", () =>
      Effect.gen(function*() {
        const store = yield* IdentityStore
        const org = yield* store.createOrganization(`org-${unique()}`)
        const email = `Ada.${unique()}@Example.com`
        const first = yield* store.provisionUser({ email, orgId: org.id, role: "admin" })
        expect(first.created).toBe(true)
        expect(first.user.email).toBe(email.toLowerCase())
        expect(first.membership).toMatchObject({ org_id: org.id, user_id: first.user.id, role: "admin" })
        const second = yield* store.provisionUser({ email: email.toUpperCase(), orgId: org.id, role: "member" })
        expect(second.created).toBe(false)
        expect(second.user.id).toBe(first.user.id)
        // The existing membership keeps its role; there is still exactly one.
        expect(second.membership.role).toBe("admin")
        expect(yield* store.listMemberships(first.user.id)).toHaveLength(1)
        expect(Option.getOrThrow(yield* store.findUser(first.user.id)).email).toBe(email.toLowerCase())
      }))

    it.effect("concurrent provisions of one email make one user and one membership", () =>
      Effect.gen(function*() {
        const store = yield* IdentityStore
        const org = yield* store.createOrganization(`org-${unique()}`)
        const email = `race.${unique()}@example.com`
        const results = yield* Effect.all(
          Array.from({ length: 8 }, () => store.provisionUser({ email, orgId: org.id, role: "member" })),
          { concurrency: "unbounded" }
        )
        expect(new Set(results.map((result) => result.user.id)).size).toBe(1)
        expect(results.filter((result) => result.created)).toHaveLength(1)
        expect(yield* store.listMemberships(results[0].user.id)).toHaveLength(1)
      }))

    it.effect("lists a user's memberships oldest first", () =>
      Effect.gen(function*() {
        const store = yield* IdentityStore
        const first = yield* store.createOrganization(`org-${unique()}`)
        const second = yield* store.createOrganization(`org-${unique()}`)
        const email = `two.${unique()}@example.com`
        const { user } = yield* store.provisionUser({ email, orgId: first.id, role: "member" })
        yield* store.provisionUser({ email, orgId: second.id, role: "owner" })
        const memberships = yield* store.listMemberships(user.id)
        expect(memberships.map((m) => [m.org_id, m.role])).toEqual([[first.id, "member"], [second.id, "owner"]])
        expect(memberships[0].active_agent_profile_id).toBeNull()
        expect(Option.isNone(yield* store.findMembership(first.id, "nobody" as UserId))).toBe(true)
        // Adding an existing membership keeps it as it is.
        const kept = yield* store.addMembership(second.id, user.id, "member")
        expect(kept.role).toBe("owner")
        const third = yield* store.createOrganization(`org-${unique()}`)
        expect((yield* store.addMembership(third.id, user.id, "admin")).role).toBe("admin")
        expect((yield* store.listMemberships(user.id)).map((m) => m.org_id)).toEqual([first.id, second.id, third.id])
        expect(Option.isNone(yield* store.findOrganization("no-such-org" as OrganizationId))).toBe(true)
        expect(Option.getOrThrow(yield* store.findOrganization(first.id)).name).toBe(first.name)
      }))

    it.effect("stores API keys by hash; only their owner deletes them", () =>
      Effect.gen(function*() {
        const store = yield* IdentityStore
        const org = yield* store.createOrganization(`org-${unique()}`)
        const alice = (yield* store.provisionUser({ email: `alice.${unique()}@example.com`, orgId: org.id, role: "member" })).user
        const bob = (yield* store.provisionUser({ email: `bob.${unique()}@example.com`, orgId: org.id, role: "member" })).user
        const expires = DateTime.unsafeMake("2031-02-03T04:05:06.789Z")
        const bound = newKey(alice.id, org.id, { expires_at: expires, created_at: DateTime.unsafeMake("2026-01-01T00:00:00Z") })
        const unbound = newKey(alice.id, null, { created_at: DateTime.unsafeMake("2026-01-01T00:00:01Z") })
        yield* store.insertApiKey(bound.key)
        yield* store.insertApiKey(unbound.key)

        const found = Option.getOrThrow(yield* store.findApiKeyByHash(hashSecret(bound.secret)))
        expect(found.id).toBe(bound.key.id)
        expect(found.org_id).toBe(org.id)
        expect(DateTime.toEpochMillis(found.expires_at!)).toBe(DateTime.toEpochMillis(expires))
        expect(Option.isNone(yield* store.findApiKeyByHash(hashSecret("hgr_unknown")))).toBe(true)
        expect((yield* store.listApiKeys(alice.id)).map((key) => key.id)).toEqual([bound.key.id, unbound.key.id])
        expect(yield* store.listApiKeys(bob.id)).toEqual([])

        expect(yield* store.deleteApiKey(bob.id, bound.key.id)).toEqual(Option.none())
        expect(Option.isSome(yield* store.findApiKeyByHash(bound.key.key_hash))).toBe(true)
        expect(yield* store.deleteApiKey(alice.id, bound.key.id)).toEqual(Option.some(bound.key.key_hash))
        expect(yield* store.deleteApiKey(alice.id, bound.key.id)).toEqual(Option.none())
        expect(Option.isNone(yield* store.findApiKeyByHash(bound.key.key_hash))).toBe(true)
      }))

    it.effect("records key usage in one batch, never moving last_used_at back", () =>
      Effect.gen(function*() {
        const store = yield* IdentityStore
        const org = yield* store.createOrganization(`org-${unique()}`)
        const user = (yield* store.provisionUser({ email: `u.${unique()}@example.com`, orgId: org.id, role: "member" })).user
        const a = newKey(user.id, org.id).key
        const b = newKey(user.id, org.id).key
        yield* store.insertApiKey(a)
        yield* store.insertApiKey(b)
        const later = DateTime.unsafeMake("2030-01-01T00:00:10.000Z")
        const earlier = DateTime.unsafeMake("2030-01-01T00:00:05.000Z")
        yield* store.recordKeyUsage(new Map([[a.id, later], [b.id, earlier]]))
        yield* store.recordKeyUsage(new Map([[a.id, earlier]]))
        yield* store.recordKeyUsage(new Map())
        const keys = yield* store.listApiKeys(user.id)
        const usedAt = (id: ApiKeyId) => keys.find((key) => key.id === id)!.last_used_at!.epochMillis
        expect(usedAt(a.id)).toBe(later.epochMillis)
        expect(usedAt(b.id)).toBe(earlier.epochMillis)
      }))

    it.effect("authorizes a key in one read: whether it still exists, and the membership asked for or the default", () =>
      Effect.gen(function*() {
        const store = yield* IdentityStore
        const first = yield* store.createOrganization(`org-${unique()}`)
        const second = yield* store.createOrganization(`org-${unique()}`)
        const email = `auth.${unique()}@example.com`
        const { user } = yield* store.provisionUser({ email, orgId: first.id, role: "member" })
        yield* store.addMembership(second.id, user.id, "admin")
        const { key } = newKey(user.id, null)
        yield* store.insertApiKey(key)

        const byDefault = yield* store.authorizeKey({ keyId: key.id, userId: user.id, orgId: Option.none() })
        expect(byDefault.keyExists).toBe(true)
        expect(Option.map(byDefault.membership, (m) => [m.org_id, m.role])).toEqual(Option.some([first.id, "member"]))
        const named = yield* store.authorizeKey({ keyId: key.id, userId: user.id, orgId: Option.some(second.id) })
        expect(Option.map(named.membership, (m) => m.role)).toEqual(Option.some("admin"))
        const elsewhere = yield* store.authorizeKey({
          keyId: key.id,
          userId: user.id,
          orgId: Option.some((yield* store.createOrganization("unrelated")).id)
        })
        expect(elsewhere).toEqual({ keyExists: true, membership: Option.none() })

        yield* store.deleteApiKey(user.id, key.id)
        expect((yield* store.authorizeKey({ keyId: key.id, userId: user.id, orgId: Option.none() })).keyExists).toBe(false)
        const nobody = yield* store.authorizeKey({ keyId: key.id, userId: "nobody" as UserId, orgId: Option.none() })
        expect(nobody).toEqual({ keyExists: false, membership: Option.none() })
      }))
  })
}
