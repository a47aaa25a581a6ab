import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type {
  ApiKey,
  ApiKeyId,
  Membership,
  Organization,
  OrganizationId,
  Role,
  User,
  UserId
} from "../domain/Identity.js"

export interface ProvisionedUser {
  readonly user: User
  readonly membership: Membership
  /** The user did not exist before. */
  readonly created: boolean
}

export interface Bootstrapped {
  readonly organization: Organization
  readonly user: User
  /** The bootstrap key was stored by this call (it was not there before). */
  readonly keyCreated: boolean
}

/**
 * Organisations, users, memberships and API keys (SPEC §3). Every method is atomic on its own;
 * storage failures are defects.
 */
export interface IdentityStoreShape {
  /** No organisation exists yet: the database was never bootstrapped. */
  readonly isEmpty: Effect.Effect<boolean>

  readonly createOrganization: (name: string) => Effect.Effect<Organization>
  readonly findOrganization: (id: OrganizationId) => Effect.Effect<Option.Option<Organization>>

  readonly findUser: (id: UserId) => Effect.Effect<Option.Option<User>>
  /**
   * Idempotent by email (compared case-insensitively): the same user on every call, one
   * membership per organisation; an existing membership keeps its role.
   */
  readonly provisionUser: (input: {
    readonly email: string
    readonly orgId: OrganizationId
    readonly role: Role
  }) => Effect.Effect<ProvisionedUser>

  /** Adds the user to the organisation; an existing membership is kept as it is. */
  readonly addMembership: (orgId: OrganizationId, userId: UserId, role: Role) => Effect.Effect<Membership>
  readonly findMembership: (orgId: OrganizationId, userId: UserId) => Effect.Effect<Option.Option<Membership>>
  /** The user's memberships, oldest (the default one) first. */
  readonly listMemberships: (userId: UserId) => Effect.Effect<ReadonlyArray<Membership>>

  readonly insertApiKey: (key: ApiKey) => Effect.Effect<void>
  readonly findApiKeyByHash: (keyHash: string) => Effect.Effect<Option.Option<ApiKey>>
  /** The user's keys, oldest first. */
  readonly listApiKeys: (userId: UserId) => Effect.Effect<ReadonlyArray<ApiKey>>
  /** Deletes one of the user's keys, returning its hash; none when the user has no such key. */
  readonly deleteApiKey: (userId: UserId, id: ApiKeyId) => Effect.Effect<Option.Option<string>>
  /**
   * What authenticating a request needs from storage, in one round trip: whether the key is still
   * stored (a key verified earlier may have been deleted since, on any replica), and the user's
   * membership in `orgId`, or their default (oldest) membership without one.
   */
  readonly authorizeKey: (input: {
    readonly keyId: ApiKeyId
    readonly userId: UserId
    readonly orgId: Option.Option<OrganizationId>
  }) => Effect.Effect<{ readonly keyExists: boolean; readonly membership: Option.Option<Membership> }>
  /** Records when keys were last used, in one write for many requests; never moves back in time. */
  readonly recordKeyUsage: (usage: ReadonlyMap<ApiKeyId, DateTime.Utc>) => Effect.Effect<void>

  /**
   * Ensures organisation `default`, its owner `admin`, and the given key for that owner. With
   * `onlyIfEmpty`, does nothing unless no organisation exists (so replicas starting together on
   * an empty database bootstrap once).
   */
  readonly bootstrap: (input: {
    readonly key: Pick<ApiKey, "id" | "name" | "key_hash" | "key_prefix" | "created_at">
    readonly onlyIfEmpty: boolean
  }) => Effect.Effect<Option.Option<Bootstrapped>>
}

export class IdentityStore extends Context.Tag("hangar/IdentityStore")<IdentityStore, IdentityStoreShape>() {}

export const BOOTSTRAP_ORGANIZATION = "default"
export const BOOTSTRAP_USER = "admin"
