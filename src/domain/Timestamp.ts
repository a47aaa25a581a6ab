import * as Schema from "effect/Schema"

/**
 * An instant on the wire: RFC 3339 in UTC (`2026-01-01T00:00:00.000Z`). Decoding accepts any
 * RFC 3339 offset; the OpenAPI document says `format: date-time` so generated clients parse it.
 */
export const Timestamp = Schema.DateTimeUtc.annotations({
  description: "RFC 3339 timestamp in UTC",
  jsonSchema: { type: "string", format: "date-time" }
})
