import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { Timestamp } from "../domain/Timestamp.js"
import { Authentication } from "./Security.js"

const Count = Schema.Number.pipe(Schema.int(), Schema.nonNegative())

export class QuotaStatus extends Schema.Class<QuotaStatus>("QuotaStatus")({
  daily_limit: Schema.NullOr(Count).annotations({
    description: "Conversations the caller may start per UTC day; null when unlimited or exempt"
  }),
  used_today: Count.annotations({ description: "Conversations the caller started today (UTC), failed starts not counted" }),
  remaining: Schema.NullOr(Count).annotations({ description: "How many more today; null when unlimited or exempt" }),
  reset_at: Timestamp.annotations({ description: "The next UTC midnight" })
}) {}

export class QuotaApi extends HttpApiGroup.make("quota")
  .add(
    HttpApiEndpoint.get("getQuotaStatus", "/api/quota/status")
      .addSuccess(QuotaStatus)
      .annotateContext(OpenApi.annotations({
        summary: "Get Quota Status",
        description: "The caller's daily conversation quota in the effective organisation: the limit that applies (the " +
          "user's override, else the organisation's, else HANGAR_DAILY_CONVERSATION_LIMIT), what is used and left."
      }))
  )
  .middleware(Authentication)
  .annotateContext(OpenApi.annotations({ title: "Quota", description: "Limits on what a user may start" }))
{}
