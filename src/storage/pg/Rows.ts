import { DateTime } from "effect"

/**
 * Rows come back from `pg` with timestamps as `Date`s; domain classes hold `DateTime.Utc`s.
 * The class constructor validates the converted row, so a column that drifted from the schema
 * fails loudly instead of leaking a wrong value.
 */
export const fromRow = <A>(Class: new(props: any) => A) => (row: Record<string, unknown>): A => {
  const props: Record<string, unknown> = {}
  for (const key in row) {
    const value = row[key]
    props[key] = value instanceof Date ? DateTime.unsafeFromDate(value) : value
  }
  return new Class(props)
}

/** A `DateTime` (or null) as the `Date` a `pg` parameter expects. */
export const toDate = (value: DateTime.Utc | null): Date | null => value === null ? null : DateTime.toDateUtc(value)
