import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { HangarApi } from "../Api.js"
import { ServiceUnavailable } from "../api/Errors.js"
import { Health, Readiness } from "../api/OperationsApi.js"
import { StorageHealth } from "../storage/StorageHealth.js"

export const OperationsHttpLive = HttpApiBuilder.group(HangarApi, "operations", (handlers) =>
  Effect.gen(function*() {
    const storage = yield* StorageHealth
    const healthy = Health.make({ status: "ok" })
    const ready = Readiness.make({ status: "ready", storage: storage.backend })
    return handlers
      .handle("healthz", () => Effect.succeed(healthy))
      .handle("readyz", () =>
        storage.check.pipe(
          Effect.as(ready),
          Effect.mapError((reason) => new ServiceUnavailable({ detail: `Storage is not ready: ${reason}` }))
        ))
  }))
