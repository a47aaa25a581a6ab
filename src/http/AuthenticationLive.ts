import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { Principal } from "../api/Security.js"
import { Authentication } from "../api/Security.js"
import { AppConfig } from "../AppConfig.js"
import { type AuthenticationError, Authenticator } from "../services/Authenticator.js"

/**
 * The credential of a request, from the first source that carries one (SPEC §3):
 * `X-Access-Token`, then `Authorization: Bearer`, then the `api_key` cookie in saas mode only.
 */
export const credentialOf = (request: HttpServerRequest.HttpServerRequest, cookieAllowed: boolean): Option.Option<string> => {
  const token = request.headers["x-access-token"]?.trim()
  if (token) return Option.some(token)
  const authorization = request.headers.authorization?.trim()
  if (authorization && /^bearer\s+/i.test(authorization)) {
    const bearer = authorization.replace(/^bearer\s+/i, "").trim()
    if (bearer) return Option.some(bearer)
  }
  if (cookieAllowed) {
    const cookie = request.cookies.api_key?.trim()
    if (cookie) return Option.some(cookie)
  }
  return Option.none()
}

/** 429s carry the limiter's headers as well as its body. */
const rateLimitHeaders = (error: AuthenticationError) =>
  error._tag !== "RateLimited"
    ? Effect.void
    : HttpApp.appendPreResponseHandler((_, response) =>
      Effect.succeed(HttpServerResponse.setHeaders(response, {
        "retry-after": String(error.detail.retry_after),
        "x-ratelimit-limit": String(error.detail.limit),
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": String(error.detail.retry_after)
      }))
    )

/**
 * The HttpApi declares the three sources as security schemes (so the OpenAPI document lists them)
 * and tries their handlers in turn until one succeeds. Precedence across sources is the rule here,
 * not "any that works": every handler returns the one outcome of resolving the request by that
 * rule, computed once per request.
 */
export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const authenticator = yield* Authenticator
    const cookieAllowed = (yield* AppConfig).webClient.app_mode === "saas"
    const outcomes = new WeakMap<HttpServerRequest.HttpServerRequest, Exit.Exit<Principal, AuthenticationError>>()

    const resolve = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const known = outcomes.get(request)
      if (known) return yield* known
      const outcome = yield* Effect.exit(authenticator.authenticate({
        apiKey: credentialOf(request, cookieAllowed),
        orgId: Option.fromNullable(request.headers["x-org-id"]?.trim() || undefined),
        clientIp: Option.getOrElse(request.remoteAddress, () => "unknown")
      }).pipe(Effect.tapError(rateLimitHeaders)))
      outcomes.set(request, outcome)
      return yield* outcome
    })

    return { accessToken: () => resolve, bearer: () => resolve, cookie: () => resolve }
  })
)
