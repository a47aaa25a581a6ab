import * as Schema from "effect/Schema"
import { Timestamp } from "./Timestamp.js"

/** Ids are opaque strings on the wire; Hangar mints UUIDs. */
export const OrganizationId = Schema.String.pipe(Schema.brand("OrganizationId"))
export type OrganizationId = typeof OrganizationId.Type
export const UserId = Schema.String.pipe(Schema.brand("UserId"))
export type UserId = typeof UserId.Type
export const ApiKeyId = Schema.String.pipe(Schema.brand("ApiKeyId"))
export type ApiKeyId = typeof ApiKeyId.Type
export const AgentProfileId = Schema.String.pipe(Schema.brand("AgentProfileId"))
export type AgentProfileId = typeof AgentProfileId.Type

export const Role = Schema.Literal("owner", "admin", "member").annotations({ identifier: "Role" })
export type Role = typeof Role.Type

export const Permission = Schema.Literal("VIEW_ORG_SETTINGS", "EDIT_ORG_SETTINGS").annotations({
  identifier: "Permission"
})
export type Permission = typeof Permission.Type

const rolePermissions: Record<Role, ReadonlyArray<Permission>> = {
  owner: ["VIEW_ORG_SETTINGS", "EDIT_ORG_SETTINGS"],
  admin: ["VIEW_ORG_SETTINGS", "EDIT_ORG_SETTINGS"],
  member: ["VIEW_ORG_SETTINGS"]
}

export const permissionsOf = (role: Role): ReadonlyArray<Permission> => rolePermissions[role]

export const hasPermission = (role: Role, permission: Permission): boolean =>
  rolePermissions[role].includes(permission)

export class Organization extends Schema.Class<Organization>("Organization")({
  id: OrganizationId,
  name: Schema.String,
  created_at: Timestamp
}) {}

export class User extends Schema.Class<User>("User")({
  id: UserId,
  name: Schema.String,
  email: Schema.NullOr(Schema.String),
  created_at: Timestamp
}) {}

export class Membership extends Schema.Class<Membership>("Membership")({
  org_id: OrganizationId,
  user_id: UserId,
  role: Role,
  /** The member's active agent profile: one of this organisation's, or none. */
  active_agent_profile_id: Schema.NullOr(AgentProfileId),
  created_at: Timestamp
}) {}

/** A stored API key: the secret itself is never stored, only its SHA-256 hash. */
export class ApiKey extends Schema.Class<ApiKey>("ApiKey")({
  id: ApiKeyId,
  name: Schema.String,
  user_id: UserId,
  /** null: explicitly unbound, usable in any organisation of the user. */
  org_id: Schema.NullOr(OrganizationId),
  key_hash: Schema.String,
  key_prefix: Schema.String,
  created_at: Timestamp,
  last_used_at: Schema.NullOr(Timestamp),
  not_before: Schema.NullOr(Timestamp),
  expires_at: Schema.NullOr(Timestamp)
}) {}
