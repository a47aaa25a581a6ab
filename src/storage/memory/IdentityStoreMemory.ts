import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { ApiKey, Membership, Organization, type OrganizationId, User, type UserId } from "../../domain/Identity.js"
import { BOOTSTRAP_ORGANIZATION, BOOTSTRAP_USER, IdentityStore, type IdentityStoreShape } from "../IdentityStore.js"
import { membershipKey, MemoryTables } from "./MemoryTables.js"

/** Volatile identity storage. Each method runs synchronously, so each is atomic. */
export const IdentityStoreMemory = Layer.effect(IdentityStore, Effect.map(MemoryTables, (tables): IdentityStoreShape => {
  const { apiKeys: keys, apiKeysByHash: keysByHash, memberships, organizations, users, usersByEmail } = tables
  const now = () => DateTime.unsafeNow()

  const createOrganization = (name: string) => {
    const organization = Organization.make({
      id: crypto.randomUUID() as OrganizationId,
      name,
      created_at: now()
    })
    organizations.set(organization.id, organization)
    return organization
  }

  const createUser = (name: string, email: string | null) => {
    const user = User.make({ id: crypto.randomUUID() as UserId, name, email, created_at: now() })
    users.set(user.id, user)
    if (email !== null) usersByEmail.set(email, user.id)
    return user
  }

  const ensureMembership = (orgId: OrganizationId, userId: UserId, role: Membership["role"]) => {
    const key = membershipKey(orgId, userId)
    const existing = memberships.get(key)
    if (existing) return existing
    const membership = Membership.make({
      org_id: orgId,
      user_id: userId,
      role,
      active_agent_profile_id: null,
      created_at: now()
    })
    memberships.set(key, membership)
    return membership
  }

  const insertApiKey = (key: ApiKey) => {
    keys.set(key.id, key)
    keysByHash.set(key.key_hash, key.id)
  }

  // By creation time; rows created in the same millisecond stay in insertion order (the sort is
  // stable), as Postgres, with microsecond timestamps, orders them.
  const oldestFirst = <A extends { readonly created_at: DateTime.Utc }>(items: Iterable<A>) =>
    Array.from(items).sort((a, b) => DateTime.toEpochMillis(a.created_at) - DateTime.toEpochMillis(b.created_at))

  return {
    isEmpty: Effect.sync(() => organizations.size === 0),
    createOrganization: (name) => Effect.sync(() => createOrganization(name)),
    findOrganization: (id) => Effect.sync(() => Option.fromNullable(organizations.get(id))),
    findUser: (id) => Effect.sync(() => Option.fromNullable(users.get(id))),
    provisionUser: ({ email, orgId, role }) =>
      Effect.sync(() => {
        const normalized = email.toLowerCase()
        const existingId = usersByEmail.get(normalized)
        const user = existingId ? users.get(existingId)! : createUser(normalized, normalized)
        return { user, membership: ensureMembership(orgId, user.id, role), created: existingId === undefined }
      }),
    addMembership: (orgId, userId, role) => Effect.sync(() => ensureMembership(orgId, userId, role)),
    findMembership: (orgId, userId) => Effect.sync(() => Option.fromNullable(memberships.get(membershipKey(orgId, userId)))),
    listMemberships: (userId) =>
      Effect.sync(() => oldestFirst(Array.from(memberships.values()).filter((m) => m.user_id === userId))),
    insertApiKey: (key) => Effect.sync(() => insertApiKey(key)),
    findApiKeyByHash: (keyHash) =>
      Effect.sync(() => Option.fromNullable(keysByHash.get(keyHash)).pipe(Option.flatMapNullable((id) => keys.get(id)))),
    listApiKeys: (userId) => Effect.sync(() => oldestFirst(Array.from(keys.values()).filter((k) => k.user_id === userId))),
    deleteApiKey: (userId, id) =>
      Effect.sync(() => {
        const key = keys.get(id)
        if (!key || key.user_id !== userId) return Option.none()
        keys.delete(id)
        keysByHash.delete(key.key_hash)
        return Option.some(key.key_hash)
      }),
    authorizeKey: ({ keyId, orgId, userId }) =>
      Effect.sync(() => ({
        keyExists: keys.has(keyId),
        membership: Option.isSome(orgId)
          ? Option.fromNullable(memberships.get(membershipKey(orgId.value, userId)))
          : Option.fromNullable(oldestFirst(Array.from(memberships.values()).filter((m) => m.user_id === userId))[0])
      })),
    recordKeyUsage: (usage) =>
      Effect.sync(() => {
        for (const [id, at] of usage) {
          const key = keys.get(id)
          if (key && (key.last_used_at === null || DateTime.lessThan(key.last_used_at, at))) {
            keys.set(id, ApiKey.make({ ...key, last_used_at: at }))
          }
        }
      }),
    bootstrap: ({ key, onlyIfEmpty }) =>
      Effect.sync(() => {
        if (onlyIfEmpty && organizations.size > 0) return Option.none()
        const organization = Array.from(organizations.values()).find((o) => o.name === BOOTSTRAP_ORGANIZATION) ??
          createOrganization(BOOTSTRAP_ORGANIZATION)
        const owner = Array.from(memberships.values()).find((m) =>
          m.org_id === organization.id && m.role === "owner" && users.get(m.user_id)?.name === BOOTSTRAP_USER
        )
        const user = owner ? users.get(owner.user_id)! : createUser(BOOTSTRAP_USER, null)
        ensureMembership(organization.id, user.id, "owner")
        const keyCreated = !keysByHash.has(key.key_hash)
        if (keyCreated) {
          insertApiKey(ApiKey.make({
            ...key,
            user_id: user.id,
            org_id: null,
            last_used_at: null,
            not_before: null,
            expires_at: null
          }))
        }
        return Option.some({ organization, user, keyCreated })
      })
  }
}))
