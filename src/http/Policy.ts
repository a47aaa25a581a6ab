import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Forbidden } from "../api/Errors.js"
import { CurrentPrincipal } from "../api/Security.js"
import { hasPermission, type Membership, type OrganizationId, type Permission } from "../domain/Identity.js"
import { IdentityStore } from "../storage/IdentityStore.js"

/**
 * Permission checks, in one place. `VIEW_ORG_SETTINGS` lets a member read and pick their own
 * profile; `EDIT_ORG_SETTINGS` (owner, admin) administers the organisation.
 */

const lacks = (permission: Permission) => new Forbidden({ detail: `This requires the ${permission} permission` })

/** The caller's membership in the effective organisation, when it grants `permission`. */
export const requirePermission = (permission: Permission): Effect.Effect<Membership, Forbidden, CurrentPrincipal> =>
  Effect.flatMap(CurrentPrincipal, ({ membership }) =>
    Option.isSome(membership) && hasPermission(membership.value.role, permission)
      ? Effect.succeed(membership.value)
      : Effect.fail(Option.isNone(membership) ? new Forbidden({ detail: "Not a member of this organization" }) : lacks(permission)))

/** May the caller's key act in `orgId` at all? A key bound to one organisation acts in no other. */
export const requireKeyScope = (orgId: OrganizationId): Effect.Effect<void, Forbidden, CurrentPrincipal> =>
  Effect.flatMap(CurrentPrincipal, ({ apiKey }) =>
    apiKey.org_id !== null && apiKey.org_id !== orgId
      ? Effect.fail(new Forbidden({ detail: "This API key is bound to another organization" }))
      : Effect.void)

/** The caller's membership in a named organisation (path or body), when it grants `permission`. */
export const requirePermissionIn = (
  orgId: OrganizationId,
  permission: Permission
): Effect.Effect<Membership, Forbidden, CurrentPrincipal | IdentityStore> =>
  Effect.gen(function*() {
    yield* requireKeyScope(orgId)
    const { userId } = yield* CurrentPrincipal
    const membership = yield* Effect.flatMap(IdentityStore, (store) => store.findMembership(orgId, userId))
    if (Option.isNone(membership)) return yield* new Forbidden({ detail: "Not a member of this organization" })
    if (!hasPermission(membership.value.role, permission)) return yield* lacks(permission)
    return membership.value
  })
