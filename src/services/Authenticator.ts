import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Forbidden, type RateLimited, Unauthorized } from "../api/Errors.js"
import type { Principal } from "../api/Security.js"
import type { ApiKey, OrganizationId } from "../domain/Identity.js"
import { IdentityStore } from "../storage/IdentityStore.js"
import { ApiKeys } from "./ApiKeys.js"
import { AuthRateLimiter } from "./AuthRateLimiter.js"

export interface Credentials {
  /** The API key from the first source that carried one, if any. */
  readonly apiKey: Option.Option<string>
  /** `X-Org-Id`. */
  readonly orgId: Option.Option<string>
  readonly clientIp: string
}

export type AuthenticationError = Unauthorized | Forbidden | RateLimited

/** Turns the credentials of a request into a principal, or into a 401, 403 or 429 (SPEC §3). */
export interface AuthenticatorShape {
  readonly authenticate: (credentials: Credentials) => Effect.Effect<Principal, AuthenticationError>
}

export class Authenticator extends Context.Tag("hangar/Authenticator")<Authenticator, AuthenticatorShape>() {}

export const AuthenticatorLive = Layer.effect(
  Authenticator,
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const store = yield* IdentityStore
    const limiter = yield* AuthRateLimiter

    /** The stored, currently valid key for the secret, or why there is none. */
    const verify = (secret: Option.Option<string>, now: DateTime.Utc): Effect.Effect<ApiKey, Unauthorized> =>
      Option.match(secret, {
        onNone: () => Effect.fail(new Unauthorized({ detail: "Not authenticated" })),
        onSome: (secret) =>
          Effect.flatMap(keys.lookup(secret), (found) => {
            if (Option.isNone(found)) return Effect.fail(new Unauthorized({ detail: "Invalid API key" }))
            const key = found.value
            if (key.not_before !== null && DateTime.lessThan(now, key.not_before)) {
              return Effect.fail(new Unauthorized({ detail: "API key is not valid yet" }))
            }
            if (key.expires_at !== null && !DateTime.lessThan(now, key.expires_at)) {
              return Effect.fail(new Unauthorized({ detail: "API key has expired" }))
            }
            return Effect.succeed(key)
          })
      })

    /**
     * The key's organisation, else `X-Org-Id`, else the user's default (oldest) membership, read
     * in the same round trip that confirms the key still exists.
     */
    const organisation = (key: ApiKey, header: Option.Option<string>) =>
      Effect.gen(function*() {
        if (key.org_id !== null && Option.isSome(header) && header.value !== key.org_id) {
          return yield* new Forbidden({ detail: "This API key is bound to another organization" })
        }
        const named = key.org_id !== null ? Option.some(key.org_id) : Option.map(header, (id) => id as OrganizationId)
        const { keyExists, membership } = yield* store.authorizeKey({ keyId: key.id, userId: key.user_id, orgId: named })
        if (!keyExists) {
          yield* keys.forget(key)
          return yield* new Unauthorized({ detail: "Invalid API key" })
        }
        if (key.org_id === null && Option.isSome(header) && Option.isNone(membership)) {
          return yield* new Forbidden({ detail: "Not a member of this organization" })
        }
        return { orgId: Option.orElse(named, () => Option.map(membership, (m) => m.org_id)), membership }
      })

    return {
      authenticate: (credentials) =>
        Effect.gen(function*() {
          yield* limiter.checkClient(credentials.clientIp)
          const now = yield* DateTime.now
          const { key, membership, orgId } = yield* verify(credentials.apiKey, now).pipe(
            Effect.flatMap((key) => Effect.map(organisation(key, credentials.orgId), (resolved) => ({ key, ...resolved }))),
            Effect.tapError((error) =>
              error._tag === "Unauthorized" ? limiter.countFailure(credentials.clientIp) : Effect.void
            )
          )
          yield* limiter.countKey(key.id)
          yield* keys.markUsed(key.id, now)
          return { userId: key.user_id, apiKey: key, orgId, membership }
        })
    }
  })
)
