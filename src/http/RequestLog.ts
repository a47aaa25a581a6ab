import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

/**
 * The outermost HTTP middleware: one structured log line per request with the method, the path
 * without its query string, the status and the duration. Failures were turned into responses
 * further in (`ErrorResponses`); one that was not has been answered 500 by the platform.
 *
 * It runs on every request, so it avoids what costs without serving: no generator, no log
 * annotations (the fields travel as the message's second part, which the logger spreads).
 */
export const requestLog = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.withFiberRuntime((fiber) => {
    const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
    const start = performance.now()
    const fields = (status: number) => ({
      method: request.method,
      path: pathOf(request.url),
      status,
      duration_ms: Math.round((performance.now() - start) * 100) / 100
    })
    return Effect.matchCauseEffect(app, {
      onFailure: (cause) =>
        Effect.zipRight(
          Cause.isInterruptedOnly(cause)
            // The client went away before the response: logged as nginx does, 499.
            ? Effect.logInfo("request", fields(499))
            : Effect.zipRight(Effect.logError("unhandled failure", cause), Effect.logInfo("request", fields(500))),
          Effect.failCause(cause)
        ),
      onSuccess: (response) => Effect.as(Effect.logInfo("request", fields(response.status)), response)
    })
  })

const pathOf = (url: string) => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}
