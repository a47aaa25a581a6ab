import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { HangarApi } from "../Api.js"
import { Forbidden, NotFound } from "../api/Errors.js"
import { MembershipInfo, ProvisionUserResponse } from "../api/OrganizationsApi.js"
import { CurrentPrincipal } from "../api/Security.js"
import { permissionsOf } from "../domain/Identity.js"
import { ApiKeys } from "../services/ApiKeys.js"
import { IdentityStore } from "../storage/IdentityStore.js"
import { requireKeyScope, requirePermissionIn } from "./Policy.js"

export const OrganizationsHttpLive = HttpApiBuilder.group(HangarApi, "organizations", (handlers) =>
  Effect.gen(function*() {
    const store = yield* IdentityStore
    const keys = yield* ApiKeys
    return handlers
      .handle("getMyMembership", ({ path }) =>
        Effect.gen(function*() {
          yield* requireKeyScope(path.org_id)
          if (Option.isNone(yield* store.findOrganization(path.org_id))) {
            return yield* new NotFound({ detail: "Organization not found" })
          }
          const membership = yield* requirePermissionIn(path.org_id, "VIEW_ORG_SETTINGS")
          return MembershipInfo.make({
            org_id: membership.org_id,
            user_id: membership.user_id,
            role: membership.role,
            permissions: permissionsOf(membership.role)
          })
        }).pipe(Effect.provideService(IdentityStore, store)))
      .handle("provisionUser", ({ payload }) =>
        Effect.gen(function*() {
          const principal = yield* CurrentPrincipal
          const orgId = payload.org_id ?? Option.getOrNull(principal.orgId)
          if (orgId === null) {
            return yield* new Forbidden({ detail: "No organization: send org_id or X-Org-Id" })
          }
          const caller = yield* requirePermissionIn(orgId, "EDIT_ORG_SETTINGS")
          if (payload.role === "owner" && caller.role !== "owner") {
            return yield* new Forbidden({ detail: "Only an owner can grant the owner role" })
          }
          const { created, membership, user } = yield* store.provisionUser({ email: payload.email, orgId, role: payload.role })
          const issued = payload.issue_api_key
            ? yield* keys.create({ userId: user.id, orgId, name: "provisioned", notBefore: null, expiresAt: null })
            : undefined
          return ProvisionUserResponse.make({
            user_id: user.id,
            org_id: orgId,
            role: membership.role,
            created,
            ...(issued ? { api_key: issued.secret } : {})
          })
        }).pipe(Effect.provideService(IdentityStore, store)))
  }))
