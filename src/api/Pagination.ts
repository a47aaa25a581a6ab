import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/**
 * Keyset pagination for every `/search` (SPEC §1). A page cursor (`page_id`) is the sort key of
 * the last row of the previous page, opaque on the wire (base64url JSON). Each collection gives
 * the schema of its own sort key, so a cursor of another collection or sort order, or one that
 * was tampered with, fails to decode: a 422 at `["query", "page_id"]`, never a silent restart.
 */

/** A `page_id` carrying a sort key of the given schema (say, a tuple of created_at and id). */
export const PageCursor = <A, I>(key: Schema.Schema<A, I>) => {
  const decodeKey = Schema.decodeUnknownEither(key)
  const encodeKey = Schema.encodeSync(key)
  return Schema.transformOrFail(Schema.String, Schema.typeSchema(key), {
    strict: true,
    decode: (cursor, _, ast) => {
      const invalid = ParseResult.fail(new ParseResult.Type(ast, cursor, "Invalid page_id"))
      if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return invalid
      let json: unknown
      try {
        json = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
      } catch {
        return invalid
      }
      const decoded = decodeKey(json)
      return decoded._tag === "Right" ? ParseResult.succeed(decoded.right) : invalid
    },
    encode: (value) => ParseResult.succeed(Buffer.from(JSON.stringify(encodeKey(value)), "utf8").toString("base64url"))
  }).annotations({
    jsonSchema: { type: "string", description: "Opaque cursor: the next_page_id of the previous page" }
  })
}

const PageLimit = Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 100)).annotations({
  description: "Items per page, 1..100",
  jsonSchema: { type: "integer", minimum: 1, maximum: 100, default: 100 }
})

export const DEFAULT_PAGE_LIMIT = 100

/** The query fields every `/search` takes, given its cursor schema. */
export const pageParams = <A>(cursor: Schema.Schema<A, string>) => ({
  page_id: Schema.optional(cursor),
  limit: Schema.optionalWith(PageLimit, { default: () => DEFAULT_PAGE_LIMIT })
})

/** The response of a `/search`: one page of items and the cursor of the next page, null on the last. */
export const Page = <S extends Schema.Schema.AnyNoContext>(item: S, identifier: string) =>
  Schema.Struct({
    items: Schema.Array(item),
    next_page_id: Schema.NullOr(Schema.String).annotations({
      description: "Pass as page_id for the next page; null when this is the last page"
    })
  }).annotations({ identifier })

/**
 * Cuts a page out of rows fetched with `limit + 1`: the extra row, if any, says that there is a
 * next page, which starts after the last row kept.
 */
export const pageOf = <A, K>(
  rows: ReadonlyArray<A>,
  limit: number,
  keyOf: (row: A) => K
): { readonly items: ReadonlyArray<A>; readonly next: Option.Option<K> } => {
  const items = rows.slice(0, limit)
  return {
    items,
    next: rows.length > limit && items.length > 0 ? Option.some(keyOf(items[items.length - 1])) : Option.none()
  }
}

/** The query of a batch get (SPEC §1): `?id=a&id=b`, at most 100 ids. */
export const batchIds = <A, I extends string>(id: Schema.Schema<A, I>) =>
  Schema.Struct({
    id: Schema.Array(id).pipe(Schema.maxItems(100)).annotations({ description: "Up to 100 ids" })
  })
