import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { UserId } from "../domain/Identity.js"
import { ExposedUrl, SandboxId, SandboxSpecId, SandboxStatus } from "../domain/Sandbox.js"
import { Timestamp } from "../domain/Timestamp.js"
import { ConflictResponse, NotFoundResponse, SandboxLimitReachedResponse } from "./Errors.js"
import { batchIds, Page, PageCursor, pageParams } from "./Pagination.js"
import { Authentication } from "./Security.js"

export class SandboxInfo extends Schema.Class<SandboxInfo>("SandboxInfo")({
  id: SandboxId,
  created_by_user_id: UserId,
  sandbox_spec_id: SandboxSpecId,
  status: SandboxStatus,
  session_api_key: Schema.NullOr(Schema.String).annotations({
    description: "The key the agent server expects in X-Session-API-Key; shown to the owner while RUNNING, else null"
  }),
  exposed_urls: Schema.NullOr(Schema.Array(ExposedUrl)).annotations({
    description: "AGENT_SERVER, VSCODE, WORKER_1, WORKER_2; null unless RUNNING"
  }),
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

export class Success extends Schema.Class<Success>("Success")({
  success: Schema.Literal(true)
}) {}

/** A sandbox page's position: the last item's creation instant (epoch ms) and id, newest first. */
export const SandboxCursor = PageCursor(Schema.Tuple(Schema.Number.pipe(Schema.int()), Schema.String))

export const SandboxPage = Page(SandboxInfo, "SandboxPage")

const IdPath = Schema.Struct({ id: SandboxId.pipe(Schema.maxLength(128)) })

export class VscodeUrl extends Schema.Class<VscodeUrl>("VscodeUrl")({
  vscode_url: Schema.String.annotations({ description: "The VSCODE URL with its token and the workspace folder" })
}) {}

export class SandboxesApi extends HttpApiGroup.make("sandboxes")
  .add(
    HttpApiEndpoint.post("startSandbox", "/api/v1/sandboxes")
      .setUrlParams(Schema.Struct({
        sandbox_spec_id: Schema.optional(SandboxSpecId.annotations({ description: "Default: the first configured spec" }))
      }))
      .addSuccess(SandboxInfo)
      .addError(NotFoundResponse)
      .addError(SandboxLimitReachedResponse)
      .annotateContext(OpenApi.annotations({
        summary: "Start Sandbox",
        description: "Starts a sandbox from a spec and returns it at once, usually STARTING; it becomes RUNNING when its " +
          "agent server answers. At most HANGAR_MAX_CONCURRENT_SANDBOXES of the caller's sandboxes may be STARTING or " +
          "RUNNING: beyond that 429 with Retry-After, or, under the pause_oldest policy, the oldest RUNNING one is paused."
      }))
  )
  .add(
    HttpApiEndpoint.get("searchSandboxes", "/api/v1/sandboxes/search")
      .setUrlParams(Schema.Struct({
        status: Schema.optional(SandboxStatus),
        ...pageParams(SandboxCursor)
      }))
      .addSuccess(SandboxPage)
      .annotateContext(OpenApi.annotations({
        summary: "Search Sandboxes",
        description: "The caller's sandboxes, newest first, optionally with one status. Keyset-paginated: pages stay " +
          "consistent while sandboxes are started."
      }))
  )
  .add(
    HttpApiEndpoint.get("batchGetSandboxes", "/api/v1/sandboxes")
      .setUrlParams(batchIds(SandboxId))
      .addSuccess(Schema.Array(Schema.NullOr(SandboxInfo)))
      .annotateContext(OpenApi.annotations({
        summary: "Batch Get Sandboxes",
        description: "The sandboxes with these ids, in request order; null for an id that is unknown or not the caller's."
      }))
  )
  .add(
    HttpApiEndpoint.post("pauseSandbox", "/api/v1/sandboxes/:id/pause")
      .setPath(IdPath)
      .addSuccess(Success)
      .addError(NotFoundResponse)
      .addError(ConflictResponse)
      .annotateContext(OpenApi.annotations({
        summary: "Pause Sandbox",
        description: "Suspends every process of the sandbox. Idempotent; 409 when the sandbox is ERROR or MISSING."
      }))
  )
  .add(
    HttpApiEndpoint.post("resumeSandbox", "/api/v1/sandboxes/:id/resume")
      .setPath(IdPath)
      .addSuccess(Success)
      .addError(NotFoundResponse)
      .addError(ConflictResponse)
      .addError(SandboxLimitReachedResponse)
      .annotateContext(OpenApi.annotations({
        summary: "Resume Sandbox",
        description: "Resumes a paused sandbox (STARTING, then RUNNING when its agent server answers). Idempotent; it " +
          "counts toward the concurrency limit; 409 when the sandbox is ERROR or MISSING."
      }))
  )
  .add(
    HttpApiEndpoint.del("deleteSandbox", "/api/v1/sandboxes/:id")
      .setPath(IdPath)
      .addSuccess(Success)
      .addError(NotFoundResponse)
      .annotateContext(OpenApi.annotations({
        summary: "Delete Sandbox",
        description: "Stops the sandbox and removes it with its workspace. Idempotent for its owner."
      }))
  )
  .add(
    HttpApiEndpoint.get("getVscodeUrl", "/api/vscode/url")
      .setUrlParams(Schema.Struct({
        sandbox_id: SandboxId.pipe(Schema.maxLength(128)),
        base_url: Schema.optional(
          Schema.String.pipe(Schema.filter((value) => URL.canParse(value), { message: () => "not an absolute URL" }))
        ).annotations({ description: "Replaces the scheme and host name of the URL (the port stays)" })
      }))
      .addSuccess(VscodeUrl)
      .addError(NotFoundResponse)
      .annotateContext(OpenApi.annotations({
        summary: "Get VSCode URL",
        description: "The caller's sandbox's editor URL with its token; 404 unless the sandbox is the caller's and RUNNING."
      }))
  )
  .middleware(Authentication)
  .annotateContext(OpenApi.annotations({
    title: "Sandboxes",
    description: "The execution environments that run agent servers"
  }))
{}
