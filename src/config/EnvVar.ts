import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { readFileSync } from "node:fs"

/**
 * Building blocks for reading one environment variable with a schema. A bad value fails with
 * an `InvalidData` whose message names the variable, says what is accepted and (unless the
 * variable holds a secret) what was given, on one line.
 */

interface Spec<A> {
  readonly schema: Schema.Schema<A, string>
  /** What is accepted, for the error message: `one of oss, saas`, `an integer 1..65535`. */
  readonly expected: string
  /** Never echo the value back (keys, connection strings). */
  readonly secret?: boolean
  /** Add where the value went wrong (for structured values such as JSON). */
  readonly detailed?: boolean
}

const describeIssue = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .map((issue) => (issue.path.length > 0 ? `at ${issue.path.map((key) => `[${JSON.stringify(key)}]`).join("")}: ` : "") + issue.message)
    .join("; ")

const decode = <A>(name: string, spec: Spec<A>, raw: string): Either.Either<A, ConfigError.ConfigError> =>
  Either.mapLeft(Schema.decodeUnknownEither(spec.schema)(raw), (error) => {
    const given = spec.secret ? "" : ` (got ${JSON.stringify(raw)})`
    const detail = spec.detailed ? `: ${describeIssue(error)}` : ""
    return ConfigError.InvalidData([], `${name}: expected ${spec.expected}${given}${detail}`)
  })

const raw = (name: string): Config.Config<Option.Option<string>> =>
  Config.string(name).pipe(
    Config.option,
    // An empty value means "not set", as for an unset variable.
    Config.map(Option.filter((value) => value.trim() !== ""))
  )

/** A variable with a default when unset or empty. */
export const withDefault = <A>(name: string, spec: Spec<A>, fallback: A): Config.Config<A> =>
  Config.mapOrFail(raw(name), (value) => Option.isNone(value) ? Either.right(fallback) : decode(name, spec, value.value))

/** A variable that may be unset. */
export const optional = <A>(name: string, spec: Spec<A>): Config.Config<Option.Option<A>> =>
  Config.mapOrFail(raw(name), (value) =>
    Option.isNone(value) ? Either.right(Option.none()) : Either.map(decode(name, spec, value.value), Option.some))

/** A variable whose empty value means something (say, "disabled"), distinct from unset. */
export const withDefaultKeepEmpty = <A>(name: string, spec: Spec<A>, fallback: A): Config.Config<A> =>
  Config.mapOrFail(
    Config.option(Config.string(name)),
    (value) => Option.isNone(value) ? Either.right(fallback) : decode(name, spec, value.value)
  )

// ---------------------------------------------------------------------------------------------
// Specs

const trimmed = Schema.compose(Schema.Trim, Schema.String)

export const literal = <const L extends ReadonlyArray<string>>(...values: L): Spec<L[number]> => ({
  schema: Schema.compose(trimmed, Schema.Literal(...values)),
  expected: `one of ${values.join(", ")}`
})

export const string: Spec<string> = { schema: Schema.String, expected: "a string" }

export const secretString = (minLength: number): Spec<Redacted.Redacted<string>> => ({
  schema: Schema.Redacted(Schema.String.pipe(Schema.minLength(minLength))),
  expected: `a string of at least ${minLength} characters`,
  secret: true
})

export const url: Spec<string> = {
  schema: Schema.String.pipe(
    Schema.filter((value) => URL.canParse(value), { message: () => "not a URL" })
  ),
  expected: "an absolute URL"
}

export const secretUrl: Spec<Redacted.Redacted<string>> = {
  schema: Schema.Redacted(url.schema),
  expected: "an absolute URL (postgres://user@host:port/database)",
  secret: true
}

const IntFromString = Schema.compose(trimmed, Schema.NumberFromString).pipe(Schema.int())

export const integer = (min: number, max = Number.MAX_SAFE_INTEGER): Spec<number> => ({
  schema: IntFromString.pipe(Schema.between(min, max)),
  expected: max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer ${min}..${max}`
})

const truthy = ["true", "1", "yes", "on"]
const falsy = ["false", "0", "no", "off"]

export const boolean: Spec<boolean> = {
  schema: Schema.transformOrFail(Schema.String, Schema.Boolean, {
    strict: true,
    decode: (value, _, ast) => {
      const normalized = value.trim().toLowerCase()
      return truthy.includes(normalized)
        ? ParseResult.succeed(true)
        : falsy.includes(normalized)
        ? ParseResult.succeed(false)
        : ParseResult.fail(new ParseResult.Type(ast, value))
    },
    encode: (value) => ParseResult.succeed(String(value))
  }),
  expected: "true or false"
}

export const timestamp: Spec<Schema.Schema.Type<typeof Schema.DateTimeUtc>> = {
  schema: Schema.compose(trimmed, Schema.DateTimeUtc),
  expected: "an RFC 3339 date-time (2026-01-01T00:00:00Z)"
}

/** A comma-separated list; blanks between commas are ignored. */
export const commaList = <A, I extends string>(item: Schema.Schema<A, I>, expected: string): Spec<ReadonlyArray<A>> => ({
  schema: Schema.compose(
    Schema.transform(Schema.String, Schema.Array(Schema.String), {
      strict: true,
      decode: (value) => value.split(",").map((part) => part.trim()).filter((part) => part !== ""),
      encode: (parts) => parts.join(",")
    }),
    Schema.Array(item as unknown as Schema.Schema<A, string>)
  ),
  expected: `a comma-separated list of ${expected}`
})

export const json = <A, I>(schema: Schema.Schema<A, I>, expected: string): Spec<A> => ({
  schema: Schema.parseJson(schema),
  expected: `JSON: ${expected}`,
  detailed: true
})

/** JSON given inline, or read from a file named after an `@`: `@/etc/hangar/specs.json`. */
export const jsonOrFile = <A, I>(schema: Schema.Schema<A, I>, expected: string): Spec<A> => ({
  schema: Schema.compose(
    Schema.transformOrFail(Schema.String, Schema.String, {
      strict: true,
      decode: (value, _, ast) => {
        const trimmed = value.trim()
        if (!trimmed.startsWith("@")) return ParseResult.succeed(value)
        const file = trimmed.slice(1)
        try {
          return ParseResult.succeed(readFileSync(file, "utf8"))
        } catch (error) {
          const reason = (error as NodeJS.ErrnoException).code ?? "unreadable"
          return ParseResult.fail(new ParseResult.Type(ast, value, `cannot read ${file} (${reason})`))
        }
      },
      encode: ParseResult.succeed
    }),
    Schema.parseJson(schema)
  ),
  expected: `JSON, inline or as @file: ${expected}`,
  detailed: true
})

const units: Record<string, number> = { second: 1, minute: 60, hour: 3600, day: 86400 }
const windowPattern = /^(\d+)\s*\/\s*(\d+)?\s*(second|minute|hour|day)s?$/i

/** Rate windows as `10/second; 100/minute` (also `5/10 seconds`); empty means none. */
export const rateWindows: Spec<ReadonlyArray<{ readonly limit: number; readonly seconds: number }>> = {
  schema: Schema.transformOrFail(
    Schema.String,
    Schema.Array(Schema.Struct({ limit: Schema.Number, seconds: Schema.Number })),
    {
      strict: true,
      decode: (value, _, ast) => {
        const parts = value.split(/[;,]/).map((part) => part.trim()).filter((part) => part !== "")
        const windows = []
        for (const part of parts) {
          const match = windowPattern.exec(part)
          const limit = Number(match?.[1])
          if (!match || limit < 1) return ParseResult.fail(new ParseResult.Type(ast, value))
          windows.push({ limit, seconds: Number(match[2] ?? 1) * units[match[3].toLowerCase()] })
        }
        return ParseResult.succeed(windows)
      },
      encode: (windows) => ParseResult.succeed(windows.map((w) => `${w.limit}/${w.seconds} seconds`).join("; "))
    }
  ),
  expected: "windows such as \"10/second; 100/minute\" (units second, minute, hour, day), or empty to disable"
}

/** A 32-byte key in base64, as `openssl rand -base64 32` prints one. */
export const secretKey: Spec<Redacted.Redacted<Uint8Array>> = {
  schema: Schema.transformOrFail(Schema.String, Schema.RedactedFromSelf(Schema.Uint8ArrayFromSelf), {
    strict: true,
    decode: (value, _, ast) => {
      const trimmed = value.trim()
      const bytes = Buffer.from(trimmed, "base64")
      return /^[A-Za-z0-9+/]+={0,2}$/.test(trimmed) && bytes.length === 32
        ? ParseResult.succeed(Redacted.make(new Uint8Array(bytes)))
        : ParseResult.fail(new ParseResult.Type(ast, value))
    },
    encode: (key) => ParseResult.succeed(Buffer.from(Redacted.value(key)).toString("base64"))
  }),
  expected: "32 bytes in base64 (openssl rand -base64 32)",
  secret: true
}
