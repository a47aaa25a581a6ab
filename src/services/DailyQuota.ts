import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { DailyConversationLimitDetail, DailyConversationLimitReached } from "../api/Errors.js"
import { AppConfig } from "../AppConfig.js"
import type { OrganizationId, UserId } from "../domain/Identity.js"
import { StartTaskStore } from "../storage/StartTaskStore.js"

/** An override of -1 exempts its user or organisation from the daily limit. */
export const EXEMPT = -1

/** The UTC day an instant falls on, as the quota counts it: `2026-01-31`. */
export const utcDay = (at: DateTime.Utc): string => DateTime.formatIso(at).slice(0, 10)

/** The next UTC midnight after an instant: when its day's count stops applying. */
export const nextUtcMidnight = (at: DateTime.Utc): DateTime.Utc =>
  DateTime.add(DateTime.startOf(at, "day"), { days: 1 })

export interface QuotaStatus {
  /** None: unlimited or exempt. */
  readonly limit: Option.Option<number>
  readonly used: number
  readonly resetAt: DateTime.Utc
}

/**
 * The daily conversation quota (SPEC §8), per user and UTC day. The limit that applies is the
 * user's override, else their organisation's (-1 exempting either), else
 * `HANGAR_DAILY_CONVERSATION_LIMIT`, else none. Reserving is the start-task store's.
 */
export interface DailyQuotaShape {
  /** The limit for the user acting in the organisation; none when there is none. */
  readonly limitFor: (userId: UserId, orgId: Option.Option<OrganizationId>) => Effect.Effect<Option.Option<number>>
  readonly status: (userId: UserId, orgId: Option.Option<OrganizationId>) => Effect.Effect<QuotaStatus>
  /** The 429 for a user who has used `used` of `limit` at the instant `at`. */
  readonly limitReached: (limit: number, used: number, at: DateTime.Utc) => DailyConversationLimitReached
}

export class DailyQuota extends Context.Tag("hangar/DailyQuota")<DailyQuota, DailyQuotaShape>() {}

export const DailyQuotaLive = Layer.effect(
  DailyQuota,
  Effect.gen(function*() {
    const { dailyConversationLimit } = yield* AppConfig
    const store = yield* StartTaskStore

    const limitFor = (userId: UserId, orgId: Option.Option<OrganizationId>) =>
      Effect.map(store.limitOverrides(userId, orgId), (overrides) =>
        Option.firstSomeOf([overrides.user, overrides.organization, dailyConversationLimit]).pipe(
          Option.filter((limit) => limit !== EXEMPT)
        ))

    return {
      limitFor,
      status: (userId, orgId) =>
        Effect.gen(function*() {
          const now = yield* DateTime.now
          const limit = yield* limitFor(userId, orgId)
          const used = yield* store.usage(userId, utcDay(now))
          return { limit, used, resetAt: nextUtcMidnight(now) }
        }),
      limitReached: (limit, used, at) => {
        const resetAt = DateTime.formatIso(nextUtcMidnight(at))
        return new DailyConversationLimitReached({
          detail: DailyConversationLimitDetail.make({
            code: "daily_conversation_limit_reached",
            message: `At most ${limit} conversations may be started per day; the count starts again at ${resetAt}.`,
            limit,
            used,
            reset_at: resetAt
          })
        })
      }
    }
  })
)
