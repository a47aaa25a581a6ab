import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { ServiceUnavailableResponse } from "./Errors.js"

export class Health extends Schema.Class<Health>("Health")({
  status: Schema.Literal("ok")
}) {}

export class Readiness extends Schema.Class<Readiness>("Readiness")({
  status: Schema.Literal("ready"),
  storage: Schema.String.annotations({ description: "The storage backend in use: memory, embedded or postgres" })
}) {}

export class OperationsApi extends HttpApiGroup.make("operations")
  .add(
    HttpApiEndpoint.get("healthz", "/healthz")
      .addSuccess(Health)
      .annotateContext(OpenApi.annotations({
        summary: "Liveness",
        description: "The process is up and serving requests."
      }))
  )
  .add(
    HttpApiEndpoint.get("readyz", "/readyz")
      .addSuccess(Readiness)
      .addError(ServiceUnavailableResponse)
      .annotateContext(OpenApi.annotations({
        summary: "Readiness",
        description: "Storage is reachable and its migrations are applied; 503 otherwise."
      }))
  )
  .annotateContext(OpenApi.annotations({
    title: "Operations",
    description: "Probes for orchestrators and load balancers"
  }))
{}
