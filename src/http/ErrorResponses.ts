import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiError from "@effect/platform/HttpApiError"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpMethod from "@effect/platform/HttpMethod"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as FindMyWay from "find-my-way-ts"
import { RequestValidationError, type ValidationErrorItem } from "../api/Errors.js"
import { item, type Section, toItems } from "./ValidationDetail.js"

/**
 * Maps what no endpoint declares to FastAPI-shaped responses:
 *
 * - a request that fails its endpoint's schemas → 422 with every failing field of every section
 *   (Effect stops at the first failing section and drops the section; the request is decoded
 *   again, with all errors, against the matched endpoint's schemas);
 * - a body that is not JSON → 422 `json_invalid`; a body over the size limit → 413;
 * - no route → 404 `{"detail": "Not Found"}`, or 405 when the path exists for other methods;
 * - a defect → 500 `{"detail": "Internal Server Error"}`, logged, nothing of it in the body.
 *
 * Declared errors pass through untouched: the HttpApi encodes them by their schemas.
 */
export const errorResponses = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E | RequestValidationError, R>
) =>
  HttpApiBuilder.middleware(
    api,
    Effect.map(FiberRef.get(HttpRouter.currentRouterConfig), (config) => {
      const routes = routeTable(api as unknown as HttpApi.HttpApi.AnyWithProps, config)
      // The app's error channel is typed `never` but carries the router's and decoder's errors.
      const handle = (error: unknown) =>
        isDecodeError(error)
          ? revalidate(routes)
          : isRouteNotFound(error)
          ? Effect.succeed(notFound(routes, error.request))
          : Effect.fail(error as RequestValidationError)
      return (app: HttpApp.Default) =>
        app.pipe(
          Effect.catchAll(handle),
          Effect.catchAllDefect((defect) =>
            Option.getOrElse(bodyFailure(defect), () =>
              Effect.as(Effect.logError("defect while serving a request", Cause.die(defect)), internalError))
          )
        )
    })
  )

type Endpoint = HttpApiEndpoint.HttpApiEndpoint.AnyWithProps

/** The endpoints, matched as the server's router matches them (same configuration). */
const routeTable = (api: HttpApi.HttpApi.AnyWithProps, config: Partial<FindMyWay.RouterConfig>) => {
  const router = FindMyWay.make<Endpoint>(config)
  HttpApi.reflect(api, {
    onGroup() {},
    onEndpoint({ endpoint }) {
      router.on(endpoint.method, endpoint.path as FindMyWay.PathInput, endpoint as unknown as Endpoint)
    }
  })
  return router
}

type Routes = ReturnType<typeof routeTable>

const isDecodeError = (error: unknown): error is HttpApiError.HttpApiDecodeError =>
  error instanceof HttpApiError.HttpApiDecodeError

const isRouteNotFound = (error: unknown): error is HttpServerError.RouteNotFound =>
  HttpServerError.isServerError(error) && error._tag === "RouteNotFound"

const detail = (status: number, message: string, headers?: Record<string, string>) =>
  HttpServerResponse.unsafeJson({ detail: message }, { status, ...(headers ? { headers } : {}) })

const internalError = detail(500, "Internal Server Error")

const notFound = (routes: Routes, request: HttpServerRequest.HttpServerRequest) => {
  const allowed = Array.from(HttpMethod.all).filter((method) => routes.find(method, request.url) !== undefined)
  return allowed.length > 0
    ? detail(405, "Method Not Allowed", { allow: allowed.join(", ") })
    : detail(404, "Not Found")
}

/** The body could not be read: not JSON (422), too large (413) or cut off (400). */
const bodyFailure = (
  defect: unknown
): Option.Option<Effect.Effect<HttpServerResponse.HttpServerResponse, RequestValidationError>> => {
  if (!HttpServerError.isServerError(defect) || defect._tag !== "RequestError" || defect.reason !== "Decode") {
    return Option.none()
  }
  const cause = defect.cause
  if (cause instanceof SyntaxError) {
    const position = /position (\d+)/.exec(cause.message)?.[1]
    return Option.some(Effect.fail(
      new RequestValidationError({
        detail: [item(["body", position ?? "0"], "json_invalid", "JSON decode error", {}, { error: cause.message })]
      })
    ))
  }
  const tooLarge = cause instanceof Error && cause.message === "maxBytes exceeded"
  return Option.some(Effect.succeed(
    tooLarge ? detail(413, "Request body too large") : detail(400, "The request body could not be read")
  ))
}

/**
 * Decodes every section of the request against the matched endpoint, reporting all issues. When
 * nothing in the request is at fault the decode error came from inside the handler: a defect.
 */
const revalidate = (routes: Routes) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const match = routes.find(request.method, request.url) ??
      (request.method === "HEAD" ? routes.find("GET", request.url) : undefined)
    const items: Array<ValidationErrorItem> = []
    if (match) {
      const endpoint = match.handler
      const query = endpoint.urlParamsSchema.pipe(Option.orElse(() =>
        HttpMethod.hasBody(endpoint.method) ? Option.none() : endpoint.payloadSchema
      ))
      check(items, "path", endpoint.pathSchema, match.params)
      check(items, "query", query, normalizeQuery(match.searchParams, query))
      check(items, "header", endpoint.headersSchema, request.headers)
      if (HttpMethod.hasBody(endpoint.method) && Option.isSome(endpoint.payloadSchema)) {
        const body = yield* Effect.orDie(request.json)
        checkBody(items, endpoint.payloadSchema.value, body)
      }
    }
    if (items.length === 0) {
      return yield* Effect.dieMessage("A schema failed to decode inside a handler")
    }
    return yield* new RequestValidationError({ detail: items })
  })

const check = (
  items: Array<ValidationErrorItem>,
  section: Section,
  schema: Option.Option<Schema.Schema.Any>,
  input: unknown
) => {
  if (Option.isNone(schema)) return
  const result = Schema.decodeUnknownEither(schema.value as Schema.Schema<unknown, unknown>, { errors: "all" })(input)
  if (Either.isLeft(result)) items.push(...toItems(section, result.left.issue, input))
}

const checkBody = (items: Array<ValidationErrorItem>, schema: Schema.Schema.Any, body: unknown) => {
  if (body === null || body === undefined) {
    items.push(item(["body"], "missing", "Field required", null))
    return
  }
  check(items, "body", Option.some(schema), body)
}

/** A query key given once is still a list when the schema wants a list (as the router does). */
const normalizeQuery = (
  params: Readonly<Record<string, string | Array<string>>>,
  schema: Option.Option<Schema.Schema.Any>
) => {
  if (Option.isNone(schema)) return params
  const ast = SchemaAST.encodedAST(schema.value.ast)
  const out: Record<string, string | Array<string>> = {}
  for (const [key, value] of Object.entries(params)) {
    out[key] = Array.isArray(value) || !wantsArray(ast, key) ? value : [value]
  }
  return out
}

const wantsArray = (ast: SchemaAST.AST, key: string): boolean => {
  if (ast._tag !== "TypeLiteral") return false
  const property = ast.propertySignatures.find((ps) => ps.name === key)
  if (!property) return false
  const types = SchemaAST.isUnion(property.type) ? property.type.types : [property.type]
  return types.some((type) => type._tag === "TupleType")
}
