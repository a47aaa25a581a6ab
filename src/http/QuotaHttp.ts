import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { HangarApi } from "../Api.js"
import { QuotaStatus } from "../api/QuotaApi.js"
import { CurrentPrincipal } from "../api/Security.js"
import { DailyQuota } from "../services/DailyQuota.js"

export const QuotaHttpLive = HttpApiBuilder.group(HangarApi, "quota", (handlers) =>
  Effect.gen(function*() {
    const quota = yield* DailyQuota
    return handlers.handle("getQuotaStatus", () =>
      Effect.gen(function*() {
        const { orgId, userId } = yield* CurrentPrincipal
        const { limit, resetAt, used } = yield* quota.status(userId, orgId)
        return QuotaStatus.make({
          daily_limit: Option.getOrNull(limit),
          used_today: used,
          remaining: Option.getOrNull(Option.map(limit, (max) => Math.max(max - used, 0))),
          reset_at: resetAt
        })
      }))
  }))
