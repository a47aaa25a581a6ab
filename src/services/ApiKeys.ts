import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import { ApiKey, type ApiKeyId, type OrganizationId, type UserId } from "../domain/Identity.js"
import { API_KEY_PREFIX, generateSecret, hashesEqual, hashSecret, secretPrefix } from "../domain/Secrets.js"
import { IdentityStore } from "../storage/IdentityStore.js"

export interface NewApiKey {
  readonly userId: UserId
  readonly orgId: OrganizationId | null
  readonly name: string
  readonly notBefore: DateTime.Utc | null
  readonly expiresAt: DateTime.Utc | null
}

export interface ApiKeysShape {
  /** Mints a key: the secret is returned this once, only its hash is stored. */
  readonly create: (input: NewApiKey) => Effect.Effect<{ readonly key: ApiKey; readonly secret: string }>
  /** The user's keys, with usage not yet written back already applied. */
  readonly list: (userId: UserId) => Effect.Effect<ReadonlyArray<ApiKey>>
  readonly remove: (userId: UserId, id: ApiKeyId) => Effect.Effect<boolean>
  /**
   * The key a presented secret belongs to (its validity window is not checked here). Verified keys
   * are kept in memory for a while, so this may answer for a key deleted since by another replica:
   * the caller confirms the key still exists (`IdentityStore.authorizeKey`) and else `forget`s it.
   */
  readonly lookup: (secret: string) => Effect.Effect<Option.Option<ApiKey>>
  readonly forget: (key: ApiKey) => Effect.Effect<void>
  /** Notes a use of the key; written back in batches, not once per request. */
  readonly markUsed: (id: ApiKeyId, at: DateTime.Utc) => Effect.Effect<void>
}

export class ApiKeys extends Context.Tag("hangar/ApiKeys")<ApiKeys, ApiKeysShape>() {}

/** How often pending `last_used_at` values are written back (and once more at shutdown). */
const USAGE_FLUSH_INTERVAL = "5 seconds"

/** How long, and how many, verified keys are kept: a request then costs no lookup by hash. */
const VERIFIED_TTL_MS = 60_000
const VERIFIED_CAPACITY = 10_000

export const ApiKeysLive = Layer.scoped(
  ApiKeys,
  Effect.gen(function*() {
    const store = yield* IdentityStore
    let pending = new Map<ApiKeyId, DateTime.Utc>()
    const verified = new Map<string, { readonly key: ApiKey; readonly until: number }>()
    const remember = (key: ApiKey) => {
      if (verified.size >= VERIFIED_CAPACITY) verified.delete(verified.keys().next().value!)
      verified.set(key.key_hash, { key, until: Date.now() + VERIFIED_TTL_MS })
    }

    const flush = Effect.suspend(() => {
      if (pending.size === 0) return Effect.void
      const batch = pending
      pending = new Map()
      return store.recordKeyUsage(batch)
    })
    yield* Effect.forkScoped(Effect.repeat(flush, Schedule.spaced(USAGE_FLUSH_INTERVAL)))
    yield* Effect.addFinalizer(() => flush)

    const withPendingUsage = (key: ApiKey) => {
      const used = pending.get(key.id)
      return used && (key.last_used_at === null || DateTime.lessThan(key.last_used_at, used))
        ? ApiKey.make({ ...key, last_used_at: used })
        : key
    }

    return {
      create: (input) =>
        Effect.gen(function*() {
          const secret = generateSecret(API_KEY_PREFIX)
          const key = ApiKey.make({
            id: crypto.randomUUID() as ApiKeyId,
            name: input.name,
            user_id: input.userId,
            org_id: input.orgId,
            key_hash: hashSecret(secret),
            key_prefix: secretPrefix(secret),
            created_at: yield* DateTime.now,
            last_used_at: null,
            not_before: input.notBefore,
            expires_at: input.expiresAt
          })
          yield* store.insertApiKey(key)
          return { key, secret }
        }),
      list: (userId) => Effect.map(store.listApiKeys(userId), (keys) => keys.map(withPendingUsage)),
      remove: (userId, id) =>
        Effect.map(store.deleteApiKey(userId, id), (deleted) => {
          if (Option.isNone(deleted)) return false
          pending.delete(id)
          verified.delete(deleted.value)
          return true
        }),
      lookup: (secret) => {
        const hash = hashSecret(secret)
        const cached = verified.get(hash)
        if (cached !== undefined && cached.until > Date.now()) return Effect.succeed(Option.some(cached.key))
        return Effect.map(store.findApiKeyByHash(hash), (found) => {
          const key = Option.filter(found, (key) => hashesEqual(key.key_hash, hash))
          if (Option.isSome(key)) remember(key.value)
          return key
        })
      },
      forget: (key) => Effect.sync(() => verified.delete(key.key_hash)),
      markUsed: (id, at) =>
        Effect.sync(() => {
          const previous = pending.get(id)
          if (previous === undefined || DateTime.lessThan(previous, at)) pending.set(id, at)
        })
    }
  })
)
