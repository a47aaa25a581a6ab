import { type HttpApp, HttpServerRequest } from "@effect/platform"
import { Cause, Effect } from "effect"

/**
 * The outermost HTTP middleware: one structured log line per request with the method, the path
 * without its query string, the status and the duration. Failures were turned into responses
 * further in (`ErrorResponses`); one that was not has been answered 500 by the platform.
 */
export const requestLog = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const start = performance.now()
    const log = (status: number) =>
      Effect.logInfo("request").pipe(Effect.annotateLogs({
        method: request.method,
        path: request.url.split("?", 1)[0],
        status,
        duration_ms: Math.round((performance.now() - start) * 100) / 100
      }))
    const response = yield* app.pipe(
      Effect.tapErrorCause((cause) =>
        Cause.isInterruptedOnly(cause)
          // The client went away before the response: logged as nginx does, 499.
          ? log(499)
          : Effect.zipRight(Effect.logError("unhandled failure", cause), log(500))
      )
    )
    yield* log(response.status)
    return response
  }) as HttpApp.Default<E, R>