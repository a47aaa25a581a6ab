import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { HangarApi } from "../Api.js"
import { SandboxSpecCursor } from "../api/SandboxSpecsApi.js"
import { pageOf } from "../api/Pagination.js"
import { Sandboxes } from "../services/Sandboxes.js"
import { requirePermission } from "./Policy.js"

const encodeCursor = Schema.encodeSync(SandboxSpecCursor)

/** The specs are configuration: a page is a slice of the configured list, keyed by position. */
export const SandboxSpecsHttpLive = HttpApiBuilder.group(HangarApi, "sandboxSpecs", (handlers) =>
  Effect.gen(function*() {
    const { specs } = yield* Sandboxes
    const positioned = specs.map((spec, index) => ({ spec, index }))
    return handlers
      .handle("searchSandboxSpecs", ({ urlParams }) =>
        Effect.map(requirePermission("VIEW_ORG_SETTINGS"), () => {
          const start = Option.match(Option.fromNullable(urlParams.page_id), { onNone: () => 0, onSome: ([last]) => last + 1 })
          const page = pageOf(positioned.slice(start, start + urlParams.limit + 1), urlParams.limit, (row) => [row.index] as const)
          return {
            items: page.items.map((row) => row.spec),
            next_page_id: Option.getOrNull(Option.map(page.next, encodeCursor))
          }
        }))
      .handle("batchGetSandboxSpecs", ({ urlParams }) =>
        Effect.map(requirePermission("VIEW_ORG_SETTINGS"), () =>
          urlParams.id.map((id) => specs.find((spec) => spec.id === id) ?? null)))
  }))
