import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import { HangarApi } from "../Api.js"
import { AppConfig } from "../AppConfig.js"
import { WebClientConfig } from "../domain/WebClientConfig.js"

/**
 * The config body depends on no user and no request: it is encoded once per configuration, with
 * its ETag, and each request only chooses between the two prepared responses.
 */
export const ConfigHttpLive = HttpApiBuilder.group(HangarApi, "config", (handlers) =>
  Effect.gen(function*() {
    const { webClient } = yield* AppConfig
    const body = JSON.stringify(yield* Schema.encode(WebClientConfig)(webClient))
    const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 32)}"`
    const headers = { etag, "cache-control": "no-cache" }
    const ok = HttpServerResponse.text(body, { contentType: "application/json", headers })
    const notModified = HttpServerResponse.empty({ status: 304, headers })
    return handlers.handle("getWebClientConfig", ({ request }) =>
      Effect.succeed(matchesEtag(request.headers["if-none-match"], etag) ? notModified : ok))
  }).pipe(Effect.orDie))

/** `If-None-Match` as RFC 9110 reads it: `*`, or a list of tags compared weakly. */
export const matchesEtag = (header: string | undefined, etag: string): boolean => {
  if (header === undefined) return false
  if (header.trim() === "*") return true
  return header.split(",").some((candidate) => candidate.trim().replace(/^W\//, "") === etag)
}
