import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { OrganizationId, Permission, Role, UserId } from "../domain/Identity.js"
import { requestBody } from "./Bodies.js"
import { ForbiddenResponse, NotFoundResponse } from "./Errors.js"
import { Authentication } from "./Security.js"

export class MembershipInfo extends Schema.Class<MembershipInfo>("MembershipInfo")({
  org_id: OrganizationId,
  user_id: UserId,
  role: Role,
  permissions: Schema.Array(Permission)
}) {}

export const Email = Schema.String.pipe(
  Schema.maxLength(254),
  Schema.pattern(/^[^@\s]+@[^@\s]+\.[^@\s]+$/)
).annotations({ description: "An e-mail address", examples: ["ada@example.com"] })

export class ProvisionUserRequest extends Schema.Class<ProvisionUserRequest>("ProvisionUserRequest")({
  email: Email,
  role: Schema.optionalWith(Role.annotations({ default: "member" }), { default: () => "member" as const }),
  org_id: Schema.optionalWith(Schema.NullOr(OrganizationId), { default: () => null }).annotations({
    description: "Default: the caller's organisation"
  }),
  issue_api_key: Schema.optionalWith(Schema.Boolean.annotations({ default: false }), { default: () => false })
}, requestBody("ProvisionUserRequest")) {}

export class ProvisionUserResponse extends Schema.Class<ProvisionUserResponse>("ProvisionUserResponse")({
  user_id: UserId,
  org_id: OrganizationId,
  role: Role.annotations({ description: "The membership's role (an existing membership keeps its own)" }),
  created: Schema.Boolean.annotations({ description: "The user did not exist before" }),
  api_key: Schema.optional(Schema.String).annotations({
    description: "With issue_api_key: a new key for the user in this organisation, shown this once"
  })
}) {}

export class OrganizationsApi extends HttpApiGroup.make("organizations")
  .add(
    HttpApiEndpoint.get("getMyMembership", "/organizations/:org_id/me")
      .setPath(Schema.Struct({ org_id: OrganizationId.pipe(Schema.maxLength(128)) }))
      .addSuccess(MembershipInfo)
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
      .annotateContext(OpenApi.annotations({
        summary: "My Membership",
        description: "The caller's role and permissions in the organisation (VIEW_ORG_SETTINGS). 403 when not a member, " +
          "404 for an unknown organisation."
      }))
  )
  .add(
    HttpApiEndpoint.post("provisionUser", "/api/organizations/provision-user")
      .setPayload(ProvisionUserRequest)
      .addSuccess(ProvisionUserResponse)
      .addError(ForbiddenResponse)
      .annotateContext(OpenApi.annotations({
        summary: "Provision User",
        description: "Ensures a user (by e-mail) and their membership in the organisation (EDIT_ORG_SETTINGS). " +
          "Idempotent: the same user_id every time, never a second membership. Only an owner may grant owner."
      }))
  )
  .middleware(Authentication)
  .annotateContext(OpenApi.annotations({ title: "Organizations", description: "Organisations and their members" }))
{}
