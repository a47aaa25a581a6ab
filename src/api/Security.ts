import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Context from "effect/Context"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { ApiKey, Membership, OrganizationId, UserId } from "../domain/Identity.js"
import { ForbiddenResponse, RateLimitedResponse, UnauthorizedResponse } from "./Errors.js"

/** Who is calling: the verified key, its user, and the effective organisation (SPEC §3). */
export interface Principal {
  readonly userId: UserId
  readonly apiKey: ApiKey
  /** The key's organisation, else `X-Org-Id`, else the user's default membership; none if none. */
  readonly orgId: Option.Option<OrganizationId>
  /** The caller's membership in that organisation. */
  readonly membership: Option.Option<Membership>
}

export class CurrentPrincipal extends Context.Tag("hangar/CurrentPrincipal")<CurrentPrincipal, Principal>() {}

const orgHeaderNote = " Send `X-Org-Id` to pick the organisation when the key is not bound to one."

/**
 * API-key authentication on every protected endpoint. The credential is taken from the first
 * source present: `X-Access-Token`, then `Authorization: Bearer`, then the `api_key` cookie
 * (honoured in `saas` mode only). Never from the URL.
 */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("hangar/Authentication", {
  provides: CurrentPrincipal,
  failure: Schema.Union(UnauthorizedResponse, ForbiddenResponse, RateLimitedResponse),
  security: {
    accessToken: HttpApiSecurity.apiKey({ key: "X-Access-Token", in: "header" }).pipe(
      HttpApiSecurity.annotate(OpenApi.Description, "An API key." + orgHeaderNote)
    ),
    bearer: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(OpenApi.Description, "An API key as a bearer token." + orgHeaderNote)
    ),
    cookie: HttpApiSecurity.apiKey({ key: "api_key", in: "cookie" }).pipe(
      HttpApiSecurity.annotate(OpenApi.Description, "An API key in a cookie; hosted (saas) deployments only.")
    )
  }
}) {}
