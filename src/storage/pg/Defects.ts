import type * as SqlError from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"

/** A store's shape whose operations may also fail with `SqlError`. */
export type WithSqlErrors<S> = {
  readonly [K in keyof S]: S[K] extends Effect.Effect<infer A, infer E, infer R> ? Effect.Effect<A, E | SqlError.SqlError, R>
    : S[K] extends (...args: infer P) => Effect.Effect<infer A, infer E, infer R>
      ? (...args: P) => Effect.Effect<A, E | SqlError.SqlError, R>
    : S[K]
}

/**
 * A storage failure means nothing to the caller (a unique violation that does is handled where it
 * happens): every `SqlError` of the store becomes a defect, answered 500 without detail.
 */
export const sqlErrorsAreDefects = <S>(store: WithSqlErrors<S>): S =>
  Object.fromEntries(
    Object.entries(store).map(([name, value]) => [
      name,
      Effect.isEffect(value)
        ? Effect.orDie(value)
        : typeof value === "function"
        ? (...args: Array<unknown>) => Effect.orDie((value as (...args: Array<unknown>) => Effect.Effect<unknown, unknown>)(...args))
        : value
    ])
  ) as S

/**
 * Whether the `SqlError` is Postgres refusing a write by the named foreign key (SQLSTATE 23503):
 * the row it pointed at is gone, which a store may report rather than fail on.
 */
export const violatesForeignKey = (error: SqlError.SqlError, constraint: string): boolean => {
  const cause = error.cause as { readonly code?: unknown; readonly constraint?: unknown } | undefined
  return cause?.code === "23503" && cause.constraint === constraint
}
