import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"

/**
 * Errors as the wire sees them: FastAPI-shaped bodies, `{"detail": …}` and nothing else.
 *
 * In code each error is a `Schema.TaggedError` with its status annotated where it is declared.
 * `wire(Error)` is the schema an endpoint declares: it encodes the error to its `detail` body
 * (no `_tag` on the wire) and decodes such a body back into the error, so the typed client and
 * the OpenAPI document see exactly what a FastAPI client expects.
 */

type DetailErrorClass = Schema.Schema.AnyNoContext & {
  readonly _tag: string
  readonly fields: { readonly detail: Schema.Schema.AnyNoContext }
}

export const wire = <E extends DetailErrorClass>(
  error: E,
  options?: { readonly identifier?: string }
): Schema.Schema<Schema.Schema.Type<E>, { readonly detail: Schema.Schema.Encoded<E["fields"]["detail"]> }> => {
  const body = Schema.Struct({ detail: error.fields.detail })
  const status = HttpApiSchema.getStatusErrorAST(error.ast)
  // A class keeps its annotations on the declaration side of its transformation.
  const declaration = SchemaAST.isTransformation(error.ast) ? error.ast.to : error.ast
  const description = SchemaAST.getDescriptionAnnotation(declaration)
  return Schema.transform(body, error, {
    strict: false,
    decode: (body) => ({ _tag: error._tag, detail: body.detail }),
    encode: (encoded) => ({ detail: (encoded as { readonly detail: unknown }).detail })
  }).annotations({
    ...HttpApiSchema.annotations({ status }),
    ...(description._tag === "Some" ? { description: description.value } : {}),
    // Named on the transformation itself, the body is a component and responses refer to it.
    ...(options?.identifier === undefined ? {} : { identifier: options.identifier })
  }) as any
}

// ---------------------------------------------------------------------------------------------
// 422

export class ValidationErrorItem extends Schema.Class<ValidationErrorItem>("ValidationError")({
  loc: Schema.Array(Schema.String).annotations({
    description: "Where the problem is: the request section (body, query, path, header), then the field path"
  }),
  msg: Schema.String,
  type: Schema.String.annotations({ description: "Machine-readable error type, as pydantic names it" }),
  input: Schema.Unknown.annotations({ description: "The offending input value" }),
  ctx: Schema.Record({ key: Schema.String, value: Schema.Unknown })
}) {}

export class RequestValidationError extends Schema.TaggedError<RequestValidationError>()(
  "RequestValidationError",
  { detail: Schema.Array(ValidationErrorItem) },
  HttpApiSchema.annotations({ status: 422, description: "Validation Error" })
) {}

export const HTTPValidationError = wire(RequestValidationError, { identifier: "HTTPValidationError" })

// ---------------------------------------------------------------------------------------------
// Plain `{"detail": "<message>"}` errors

const ErrorDetail = Schema.String.annotations({ description: "Human-readable message" })

export class Unauthorized extends Schema.TaggedError<Unauthorized>()(
  "Unauthorized",
  { detail: ErrorDetail },
  HttpApiSchema.annotations({ status: 401, description: "Missing or invalid credential" })
) {}

export class Forbidden extends Schema.TaggedError<Forbidden>()(
  "Forbidden",
  { detail: ErrorDetail },
  HttpApiSchema.annotations({ status: 403, description: "The credential lacks the permission or membership" })
) {}

export class NotFound extends Schema.TaggedError<NotFound>()(
  "NotFound",
  { detail: ErrorDetail },
  HttpApiSchema.annotations({ status: 404, description: "Not Found" })
) {}

export class Conflict extends Schema.TaggedError<Conflict>()(
  "Conflict",
  { detail: ErrorDetail },
  HttpApiSchema.annotations({ status: 409, description: "Conflict" })
) {}

export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()(
  "ServiceUnavailable",
  { detail: ErrorDetail },
  HttpApiSchema.annotations({ status: 503, description: "Service Unavailable" })
) {}

export const UnauthorizedResponse = wire(Unauthorized)
export const ForbiddenResponse = wire(Forbidden)
export const NotFoundResponse = wire(NotFound)
export const ConflictResponse = wire(Conflict)
export const ServiceUnavailableResponse = wire(ServiceUnavailable)

// ---------------------------------------------------------------------------------------------
// 429: a rate or quota limit, with an object detail and `Retry-After`

const Count = Schema.Number.pipe(Schema.int())

export class RateLimitDetail extends Schema.Class<RateLimitDetail>("RateLimitDetail")({
  code: Schema.Literal("rate_limited"),
  message: Schema.String,
  limit: Count.annotations({ description: "Requests allowed per window" }),
  window_seconds: Count,
  retry_after: Count.annotations({ description: "Seconds until the window resets" })
}) {}

export class RateLimited extends Schema.TaggedError<RateLimited>()(
  "RateLimited",
  { detail: RateLimitDetail },
  HttpApiSchema.annotations({ status: 429, description: "Too many authentication requests" })
) {}

export const RateLimitedResponse = wire(RateLimited, { identifier: "RateLimitedError" })

export class SandboxLimitDetail extends Schema.Class<SandboxLimitDetail>("SandboxLimitDetail")({
  code: Schema.Literal("sandbox_limit_reached"),
  message: Schema.String,
  limit: Count.annotations({ description: "STARTING + RUNNING sandboxes allowed per user" }),
  current: Count.annotations({ description: "The caller's STARTING + RUNNING sandboxes now" })
}) {}

export class SandboxLimitReached extends Schema.TaggedError<SandboxLimitReached>()(
  "SandboxLimitReached",
  { detail: SandboxLimitDetail },
  HttpApiSchema.annotations({ status: 429, description: "Too many active sandboxes: pause or delete one first" })
) {}

export const SandboxLimitReachedResponse = wire(SandboxLimitReached, { identifier: "SandboxLimitReachedError" })

export class DailyConversationLimitDetail extends Schema.Class<DailyConversationLimitDetail>("DailyConversationLimitDetail")({
  code: Schema.Literal("daily_conversation_limit_reached"),
  message: Schema.String,
  limit: Count.annotations({ description: "Conversations the caller may start per UTC day" }),
  used: Count.annotations({ description: "Conversations the caller started today (UTC)" }),
  // Held as its wire text: `wire` bodies carry a detail whose type and encoding are the same.
  reset_at: Schema.String.annotations({
    description: "The next UTC midnight (RFC 3339), when the count starts again",
    jsonSchema: { type: "string", format: "date-time" }
  })
}) {}

export class DailyConversationLimitReached extends Schema.TaggedError<DailyConversationLimitReached>()(
  "DailyConversationLimitReached",
  { detail: DailyConversationLimitDetail },
  HttpApiSchema.annotations({ status: 429, description: "The daily conversation quota is used up" })
) {}

export const DailyConversationLimitReachedResponse = wire(DailyConversationLimitReached, {
  identifier: "DailyConversationLimitReachedError"
})
