import * as Schema from "effect/Schema"

/**
 * Class annotations for request bodies: unknown fields are refused (422 `extra_forbidden`), and
 * the class is an OpenAPI component under its name even when it has defaulted fields (whose
 * encoded side would otherwise be inlined).
 */
export const requestBody = (identifier: string) =>
  [undefined, { identifier, parseOptions: { onExcessProperty: "error" as const } }] as const

/** The component annotation alone, for response classes with defaulted fields. */
export const component = (identifier: string) => [undefined, { identifier }] as const

/** A request field that may be left out or null; left out, it is null. */
export const optionalNullable = <A, I>(schema: Schema.Schema<A, I>) =>
  Schema.optionalWith(Schema.NullOr(schema), { default: () => null })
