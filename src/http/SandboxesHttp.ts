import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { HangarApi } from "../Api.js"
import { ExposedUrl, type SandboxRecord } from "../domain/Sandbox.js"
import { SandboxCursor, SandboxInfo, Success, VscodeUrl } from "../api/SandboxesApi.js"
import { CurrentPrincipal } from "../api/Security.js"
import { Sandboxes, type SandboxesShape } from "../services/Sandboxes.js"

/** Seconds a client is told to wait after a 429: about one reconciliation, when a slot may free up. */
export const SANDBOX_LIMIT_RETRY_AFTER = 30

/** A 429 for the sandbox limit carries `Retry-After` besides its body. */
export const retryAfterOnLimit = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.tapError(effect, (error) =>
    error._tag !== "SandboxLimitReached"
      ? Effect.void
      : HttpApp.appendPreResponseHandler((_, response) =>
        Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(SANDBOX_LIMIT_RETRY_AFTER)))
      ))

/** A record as its owner sees it: the session key and URLs only while RUNNING. */
export const sandboxInfo = (sandboxes: SandboxesShape, record: SandboxRecord) => {
  const running = record.status === "RUNNING"
  return SandboxInfo.make({
    id: record.id,
    created_by_user_id: record.created_by_user_id,
    sandbox_spec_id: record.sandbox_spec_id,
    status: record.status,
    session_api_key: sandboxes.sessionKeyOf(record),
    exposed_urls: running && record.exposed_urls !== null ? record.exposed_urls.map((url) => ExposedUrl.make(url)) : null,
    created_at: record.created_at,
    updated_at: record.updated_at
  })
}

const encodeCursor = Schema.encodeSync(SandboxCursor)

const success = Success.make({ success: true })

export const SandboxesHttpLive = HttpApiBuilder.group(HangarApi, "sandboxes", (handlers) =>
  Effect.gen(function*() {
    const sandboxes = yield* Sandboxes
    const caller = Effect.map(CurrentPrincipal, (principal) => principal.userId)
    return handlers
      .handle("startSandbox", ({ urlParams }) =>
        Effect.flatMap(caller, (userId) => sandboxes.start(userId, Option.fromNullable(urlParams.sandbox_spec_id))).pipe(
          Effect.map((record) => sandboxInfo(sandboxes, record)),
          retryAfterOnLimit
        ))
      .handle("searchSandboxes", ({ urlParams }) =>
        Effect.gen(function*() {
          const page = yield* sandboxes.search(yield* caller, {
            status: Option.fromNullable(urlParams.status),
            after: Option.fromNullable(urlParams.page_id),
            limit: urlParams.limit
          })
          return {
            items: page.items.map((record) => sandboxInfo(sandboxes, record)),
            next_page_id: Option.getOrNull(Option.map(page.next, encodeCursor))
          }
        }))
      .handle("batchGetSandboxes", ({ urlParams }) =>
        Effect.flatMap(caller, (userId) => sandboxes.getMany(userId, urlParams.id)).pipe(
          Effect.map((found) => found.map((record) => Option.getOrNull(Option.map(record, (r) => sandboxInfo(sandboxes, r)))))
        ))
      .handle("pauseSandbox", ({ path }) => Effect.as(Effect.flatMap(caller, (userId) => sandboxes.pause(userId, path.id)), success))
      .handle("resumeSandbox", ({ path }) =>
        Effect.as(Effect.flatMap(caller, (userId) => sandboxes.resume(userId, path.id)), success).pipe(retryAfterOnLimit))
      .handle("deleteSandbox", ({ path }) => Effect.as(Effect.flatMap(caller, (userId) => sandboxes.remove(userId, path.id)), success))
      .handle("getVscodeUrl", ({ urlParams }) =>
        Effect.flatMap(caller, (userId) =>
          sandboxes.vscodeUrl(
            userId,
            urlParams.sandbox_id,
            Option.map(Option.fromNullable(urlParams.base_url), (base) => new URL(base))
          )).pipe(Effect.map((vscode_url) => VscodeUrl.make({ vscode_url }))))
  }))
