import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { HangarApi } from "../Api.js"
import { Forbidden, NotFound, RequestValidationError, type ValidationErrorItem } from "../api/Errors.js"
import { ApiKeyCreated, ApiKeyInfo, type CreateApiKeyRequest, CurrentApiKey } from "../api/KeysApi.js"
import { CurrentPrincipal } from "../api/Security.js"
import type { ApiKey } from "../domain/Identity.js"
import { ApiKeys } from "../services/ApiKeys.js"
import { IdentityStore } from "../storage/IdentityStore.js"
import { item } from "./ValidationDetail.js"

const info = (key: ApiKey) => ApiKeyInfo.make({
  id: key.id,
  name: key.name,
  key_prefix: key.key_prefix,
  user_id: key.user_id,
  org_id: key.org_id,
  created_at: key.created_at,
  last_used_at: key.last_used_at,
  not_before: key.not_before,
  expires_at: key.expires_at
})

/** What the body's schema cannot say: fields that exclude each other, instants relative to now. */
const checkRequest = (payload: CreateApiKeyRequest, now: DateTime.Utc) => {
  const problems: Array<ValidationErrorItem> = []
  if (payload.unbound && payload.org_id !== null) {
    problems.push(item(["body", "org_id"], "value_error", "Value error, org_id cannot be combined with unbound", payload.org_id))
  }
  const { expires_at, not_before } = payload
  if (expires_at !== null && !DateTime.lessThan(now, expires_at)) {
    problems.push(item(["body", "expires_at"], "value_error", "Value error, expires_at must be in the future", DateTime.formatIso(expires_at)))
  } else if (expires_at !== null && not_before !== null && !DateTime.lessThan(not_before, expires_at)) {
    problems.push(item(["body", "expires_at"], "value_error", "Value error, expires_at must be after not_before", DateTime.formatIso(expires_at)))
  }
  return problems.length > 0 ? Effect.fail(new RequestValidationError({ detail: problems })) : Effect.void
}

export const KeysHttpLive = HttpApiBuilder.group(HangarApi, "keys", (handlers) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const store = yield* IdentityStore
    return handlers
      .handle("createApiKey", ({ payload }) =>
        Effect.gen(function*() {
          const principal = yield* CurrentPrincipal
          yield* checkRequest(payload, yield* DateTime.now)
          const orgId = payload.unbound ? null : payload.org_id ?? Option.getOrNull(principal.orgId)
          if (principal.apiKey.org_id !== null && orgId !== principal.apiKey.org_id) {
            return yield* new Forbidden({ detail: "A key bound to an organization can only create keys bound to it" })
          }
          if (orgId !== null && Option.isNone(yield* store.findMembership(orgId, principal.userId))) {
            return yield* new Forbidden({ detail: "Not a member of this organization" })
          }
          const { key, secret } = yield* keys.create({
            userId: principal.userId,
            orgId,
            name: payload.name,
            notBefore: payload.not_before,
            expiresAt: payload.expires_at
          })
          const { last_used_at: _, ...fields } = info(key)
          return ApiKeyCreated.make({ ...fields, key: secret })
        }))
      .handle("listApiKeys", () =>
        Effect.flatMap(CurrentPrincipal, ({ userId }) => Effect.map(keys.list(userId), (list) => list.map(info))))
      .handle("getCurrentApiKey", () =>
        Effect.map(CurrentPrincipal, ({ apiKey }) =>
          CurrentApiKey.make({ id: apiKey.id, name: apiKey.name, org_id: apiKey.org_id, user_id: apiKey.user_id })))
      .handle("deleteApiKey", ({ path }) =>
        Effect.flatMap(CurrentPrincipal, ({ userId }) =>
          Effect.flatMap(keys.remove(userId, path.key_id), (deleted) =>
            deleted ? Effect.void : Effect.fail(new NotFound({ detail: "API key not found" })))))
  }))
