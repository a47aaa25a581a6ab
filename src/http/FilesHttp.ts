import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { HangarApi } from "../Api.js"
import { RequestValidationError } from "../api/Errors.js"
import { DirectoryCreated } from "../api/FilesApi.js"
import { CurrentPrincipal } from "../api/Security.js"
import { Sandboxes } from "../services/Sandboxes.js"
import { item } from "./ValidationDetail.js"

export const FilesHttpLive = HttpApiBuilder.group(HangarApi, "files", (handlers) =>
  Effect.gen(function*() {
    const sandboxes = yield* Sandboxes
    return handlers.handle("createDirectory", ({ payload }) =>
      Effect.gen(function*() {
        const { userId } = yield* CurrentPrincipal
        const path = yield* sandboxes.createDirectory(userId, payload.sandbox_id, payload.path).pipe(
          Effect.catchTag("PathOutsideWorkspace", ({ reason }) =>
            new RequestValidationError({
              detail: [item(["body", "path"], "value_error", `Value error, ${reason}`, payload.path)]
            }))
        )
        return DirectoryCreated.make({ success: true, path })
      }))
  }))
