import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { AgentProfileSettings } from "../../src/domain/AgentProfile.js"
import type { AgentProfileId, OrganizationId, UserId } from "../../src/domain/Identity.js"
import { AgentProfileStore } from "../../src/storage/AgentProfileStore.js"
import { IdentityStore } from "../../src/storage/IdentityStore.js"
import { backends } from "../support/Databases.js"

const unique = () => crypto.randomUUID().slice(0, 8)

const settings = (overrides: Partial<AgentProfileSettings> = {}): AgentProfileSettings => ({
  agent_kind: "openhands",
  llm_profile_ref: null,
  mcp_server_refs: [],
  system_message_suffix: null,
  acp_server: null,
  acp_model: null,
  acp_command: null,
  acp_args: [],
  ...overrides
})

/** A fresh organisation with `members` members, so tests share a database without interfering. */
const organization = (members = 1) =>
  Effect.gen(function*() {
    const identity = yield* IdentityStore
    const org = yield* identity.createOrganization(`org-${unique()}`)
    const users: Array<UserId> = []
    for (let i = 0; i < members; i++) {
      users.push((yield* identity.provisionUser({ email: `m${i}.${unique()}@example.com`, orgId: org.id, role: "member" })).user.id)
    }
    return { orgId: org.id, users }
  })

const pointerOf = (orgId: OrganizationId, userId: UserId) =>
  Effect.flatMap(IdentityStore, (identity) =>
    Effect.map(identity.findMembership(orgId, userId), (m) => Option.getOrThrow(m).active_agent_profile_id))

for (const backend of backends) {
  layer(backend.storage, { timeout: "120 seconds" })(`AgentProfileStore contract on ${backend.name}`, (it) => {
    it.effect("creates at revision 1, replaces keeping the id with the next revision, lists by name", () =>
      Effect.gen(function*() {
        const store = yield* AgentProfileStore
        const { orgId } = yield* organization(0)
        const created = yield* store.save({ orgId, name: "writer", settings: settings({ mcp_server_refs: ["fs", "git"] }), limit: 50 })
        expect(created._tag).toBe("Created")
        if (created._tag !== "Created") return
        expect(created.profile).toMatchObject({ org_id: orgId, name: "writer", revision: 1, mcp_server_refs: ["fs", "git"] })
        expect(created.profile.updated_at).toEqual(created.profile.created_at)

        const replaced = yield* store.save({
          orgId,
          name: "writer",
          settings: settings({ agent_kind: "acp", acp_server: "claude", acp_args: ["--fast"], system_message_suffix: "Be brief." }),
          limit: 50
        })
        expect(replaced._tag).toBe("Replaced")
        if (replaced._tag !== "Replaced") return
        expect(replaced.profile).toMatchObject({
          id: created.profile.id,
          revision: 2,
          agent_kind: "acp",
          acp_server: "claude",
          acp_args: ["--fast"],
          mcp_server_refs: [],
          system_message_suffix: "Be brief."
        })
        expect(replaced.profile.created_at).toEqual(created.profile.created_at)
        expect(Option.getOrThrow(yield* store.findByName(orgId, "writer"))).toEqual(replaced.profile)

        yield* store.save({ orgId, name: "Alpha", settings: settings(), limit: 50 })
        yield* store.save({ orgId, name: "beta", settings: settings(), limit: 50 })
        expect((yield* store.list(orgId)).map((p) => p.name)).toEqual(["Alpha", "beta", "writer"])
        expect(Option.isNone(yield* store.findByName(orgId, "nope"))).toBe(true)
      }))

    it.effect("another organisation's profiles are invisible", () =>
      Effect.gen(function*() {
        const store = yield* AgentProfileStore
        const a = yield* organization(0)
        const b = yield* organization(0)
        yield* store.save({ orgId: a.orgId, name: "shared-name", settings: settings(), limit: 50 })
        expect(yield* store.list(b.orgId)).toEqual([])
        expect(Option.isNone(yield* store.findByName(b.orgId, "shared-name"))).toBe(true)
        // The same name in another organisation is another profile.
        const other = yield* store.save({ orgId: b.orgId, name: "shared-name", settings: settings(), limit: 50 })
        expect(other._tag).toBe("Created")
      }))

    it.effect("refuses a create at the limit, yet replaces at the limit", () =>
      Effect.gen(function*() {
        const store = yield* AgentProfileStore
        const { orgId } = yield* organization(0)
        for (const name of ["a", "b", "c"]) expect((yield* store.save({ orgId, name, settings: settings(), limit: 3 }))._tag).toBe("Created")
        expect(yield* store.save({ orgId, name: "d", settings: settings(), limit: 3 })).toEqual({ _tag: "LimitReached" })
        expect((yield* store.save({ orgId, name: "b", settings: settings(), limit: 3 }))._tag).toBe("Replaced")
        expect(yield* store.list(orgId)).toHaveLength(3)
      }))

    it.effect("parallel creates never overshoot the limit", () =>
      Effect.gen(function*() {
        const store = yield* AgentProfileStore
        const { orgId } = yield* organization(0)
        const outcomes = yield* Effect.all(
          Array.from({ length: 12 }, (_, i) => store.save({ orgId, name: `p${i}`, settings: settings(), limit: 5 })),
          { concurrency: "unbounded" }
        )
        expect(outcomes.filter((o) => o._tag === "Created")).toHaveLength(5)
        expect(outcomes.filter((o) => o._tag === "LimitReached")).toHaveLength(7)
        expect(yield* store.list(orgId)).toHaveLength(5)
      }))

    it.effect("renames keeping the id; a taken name, a missing profile and the same name are told apart", () =>
      Effect.gen(function*() {
        const store = yield* AgentProfileStore
        const { orgId } = yield* organization(0)
        const first = yield* store.save({ orgId, name: "old", settings: settings(), limit: 50 })
        yield* store.save({ orgId, name: "taken", settings: settings(), limit: 50 })
        if (first._tag !== "Created") return expect.fail("not created")

        const renamed = yield* store.rename(orgId, "old", "new")
        expect(renamed._tag).toBe("Renamed")
        if (renamed._tag !== "Renamed") return
        expect(renamed.profile).toMatchObject({ id: first.profile.id, name: "new", revision: 2 })
        expect(Option.isNone(yield* store.findByName(orgId, "old"))).toBe(true)
        expect(Option.getOrThrow(yield* store.findByName(orgId, "new")).id).toBe(first.profile.id)
        // The old name is free again.
        expect((yield* store.save({ orgId, name: "old", settings: settings(), limit: 50 }))._tag).toBe("Created")

        expect(yield* store.rename(orgId, "new", "taken")).toEqual({ _tag: "NameTaken" })
        expect(yield* store.rename(orgId, "missing", "other")).toEqual({ _tag: "NotFound" })
        const same = yield* store.rename(orgId, "new", "new")
        expect(same).toEqual({ _tag: "Renamed", profile: renamed.profile })
      }))

    it.effect("activation writes the member's pointer and nothing else", () =>
      Effect.gen(function*() {
        const store = yield* AgentProfileStore
        const { orgId, users: [alice, bob] } = yield* organization(2)
        const saved = yield* store.save({ orgId, name: "picked", settings: settings(), limit: 50 })
        if (saved._tag !== "Created") return expect.fail("not created")
        const before = Option.getOrThrow(yield* store.findByName(orgId, "picked"))

        expect(yield* store.activate(orgId, alice, saved.profile.id)).toBe(true)
        expect(yield* pointerOf(orgId, alice)).toBe(saved.profile.id)
        expect(yield* pointerOf(orgId, bob)).toBeNull()
        expect(Option.getOrThrow(yield* store.findByName(orgId, "picked"))).toEqual(before)
        // Again: still fine, still nothing else written.
        expect(yield* store.activate(orgId, alice, saved.profile.id)).toBe(true)
        expect(Option.getOrThrow(yield* store.findByName(orgId, "picked"))).toEqual(before)
      }))

    it.effect("activation refuses an unknown id, another organisation's profile, and a non-member", () =>
      Effect.gen(function*() {
        const store = yield* AgentProfileStore
        const mine = yield* organization(1)
        const theirs = yield* organization(0)
        const foreign = yield* store.save({ orgId: theirs.orgId, name: "foreign", settings: settings(), limit: 50 })
        const own = yield* store.save({ orgId: mine.orgId, name: "own", settings: settings(), limit: 50 })
        if (foreign._tag !== "Created" || own._tag !== "Created") return expect.fail("not created")
        const [member] = mine.users

        expect(yield* store.activate(mine.orgId, member, crypto.randomUUID() as AgentProfileId)).toBe(false)
        expect(yield* store.activate(mine.orgId, member, foreign.profile.id)).toBe(false)
        expect(yield* pointerOf(mine.orgId, member)).toBeNull()
        expect(yield* store.activate(theirs.orgId, member, foreign.profile.id)).toBe(false)
        expect(yield* store.activate(mine.orgId, member, own.profile.id)).toBe(true)
        // A refused activation leaves the current pointer alone.
        expect(yield* store.activate(mine.orgId, member, foreign.profile.id)).toBe(false)
        expect(yield* pointerOf(mine.orgId, member)).toBe(own.profile.id)
      }))

    it.effect("deleting a profile clears every pointer to it, and only those; deleting again is a no-op", () =>
      Effect.gen(function*() {
        const store = yield* AgentProfileStore
        const { orgId, users: [a, b, c] } = yield* organization(3)
        const doomed = yield* store.save({ orgId, name: "doomed", settings: settings(), limit: 50 })
        const kept = yield* store.save({ orgId, name: "kept", settings: settings(), limit: 50 })
        if (doomed._tag !== "Created" || kept._tag !== "Created") return expect.fail("not created")
        yield* store.activate(orgId, a, doomed.profile.id)
        yield* store.activate(orgId, b, doomed.profile.id)
        yield* store.activate(orgId, c, kept.profile.id)

        expect(yield* store.remove(orgId, "doomed")).toBe(true)
        expect([yield* pointerOf(orgId, a), yield* pointerOf(orgId, b), yield* pointerOf(orgId, c)])
          .toEqual([null, null, kept.profile.id])
        expect(Option.isNone(yield* store.findByName(orgId, "doomed"))).toBe(true)
        expect(yield* store.remove(orgId, "doomed")).toBe(false)
        expect(yield* store.activate(orgId, a, doomed.profile.id)).toBe(false)
      }))

    it.effect("a profile deleted while members activate it leaves no pointer behind", () =>
      Effect.gen(function*() {
        const store = yield* AgentProfileStore
        const { orgId, users } = yield* organization(6)
        const saved = yield* store.save({ orgId, name: "contested", settings: settings(), limit: 50 })
        if (saved._tag !== "Created") return expect.fail("not created")
        yield* Effect.all(
          [...users.map((user) => store.activate(orgId, user, saved.profile.id)), store.remove(orgId, "contested")],
          { concurrency: "unbounded" }
        )
        for (const user of users) expect(yield* pointerOf(orgId, user)).toBeNull()
      }))
  })
}
