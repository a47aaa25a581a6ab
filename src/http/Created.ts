import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"

/**
 * Answers 201 instead of 200 for a request that created its resource: an endpoint that creates
 * or replaces declares the same body schema for both statuses, and a body cannot tell them apart.
 * Only a 200 becomes a 201, so a failure after this point keeps its own status.
 */
export const answerCreated = HttpApp.appendPreResponseHandler((_, response) =>
  Effect.succeed(response.status === 200 ? HttpServerResponse.setStatus(response, 201) : response)
)
