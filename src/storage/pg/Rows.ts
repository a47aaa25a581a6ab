import * as DateTime from "effect/DateTime"
import * as Schema from "effect/Schema"

/**
 * Rows come back from `pg` with timestamps as `Date`s; domain classes hold `DateTime.Utc`s.
 * The converted row is validated against the class's fields, so a column that drifted from the
 * schema fails loudly instead of leaking a wrong value. The validator is built once per class:
 * the class constructor's own validation costs several times as much per row, which pages of a
 * hundred rows feel.
 */
export const fromRow = <A>(Class: {
  new(props: any, options?: boolean): A
  readonly fields: Schema.Struct.Fields
}) => {
  const validate = Schema.validateSync(Schema.Struct(Class.fields))
  return (row: Record<string, unknown>): A => {
    const props: Record<string, unknown> = {}
    for (const key in row) {
      const value = row[key]
      props[key] = value instanceof Date ? DateTime.unsafeFromDate(value) : value
    }
    return new Class(validate(props), true)
  }
}

/** A `DateTime` (or null) as the `Date` a `pg` parameter expects. */
export const toDate = (value: DateTime.Utc | null): Date | null => value === null ? null : DateTime.toDateUtc(value)
