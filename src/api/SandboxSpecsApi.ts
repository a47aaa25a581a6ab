import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { SandboxSpec } from "../domain/Sandbox.js"
import { ForbiddenResponse } from "./Errors.js"
import { batchIds, Page, PageCursor, pageParams } from "./Pagination.js"
import { Authentication } from "./Security.js"

/** A spec page's position: the index of its last spec in the configured order. */
export const SandboxSpecCursor = PageCursor(Schema.Tuple(Schema.Number.pipe(Schema.int(), Schema.nonNegative())))

export const SandboxSpecPage = Page(SandboxSpec, "SandboxSpecPage")

export class SandboxSpecsApi extends HttpApiGroup.make("sandboxSpecs")
  .add(
    HttpApiEndpoint.get("searchSandboxSpecs", "/api/v1/sandbox-specs/search")
      .setUrlParams(Schema.Struct(pageParams(SandboxSpecCursor)))
      .addSuccess(SandboxSpecPage)
      .addError(ForbiddenResponse)
      .annotateContext(OpenApi.annotations({
        summary: "Search Sandbox Specs",
        description: "The configured sandbox specs (VIEW_ORG_SETTINGS), the default first."
      }))
  )
  .add(
    HttpApiEndpoint.get("batchGetSandboxSpecs", "/api/v1/sandbox-specs")
      .setUrlParams(batchIds(Schema.String))
      .addSuccess(Schema.Array(Schema.NullOr(SandboxSpec)))
      .addError(ForbiddenResponse)
      .annotateContext(OpenApi.annotations({
        summary: "Batch Get Sandbox Specs",
        description: "The specs with these ids, in request order; null for an unknown id (VIEW_ORG_SETTINGS)."
      }))
  )
  .middleware(Authentication)
  .annotateContext(OpenApi.annotations({
    title: "Sandbox Specs",
    description: "The templates sandboxes are started from, configured by HANGAR_SANDBOX_SPECS; read-only"
  }))
{}
