import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as OpenApi from "@effect/platform/OpenApi"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { HTTPValidationError } from "../../src/api/Errors.js"
import { fastApiConventions } from "../../src/api/OpenApiConventions.js"
import * as NodeServer from "../../src/http/NodeServer.js"
import { serveApi } from "../../src/Server.js"
import { createServer } from "node:http"
import { get, json, quiet, send, testServer } from "../support/TestServer.js"

// A test-only API with a body, a path and a query, served with Hangar's own HTTP conventions
// (`serveApi`), so the 422 mapping is exercised on every request section.
class Item extends Schema.Class<Item>("Item")({
  name: Schema.String.pipe(Schema.maxLength(5)),
  count: Schema.Int,
  kind: Schema.Literal("a", "b"),
  tags: Schema.optional(Schema.Array(Schema.String))
}, [undefined, { parseOptions: { onExcessProperty: "error" } }]) {}

const TestApi = HttpApi.make("test")
  .add(
    HttpApiGroup.make("items")
      .add(
        HttpApiEndpoint.post("createItem", "/items/:item_id")
          .setPath(Schema.Struct({ item_id: Schema.String.pipe(Schema.maxLength(8)) }))
          .setUrlParams(Schema.Struct({
            limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 100)))
          }))
          .setPayload(Item)
          .addSuccess(Item)
      )
      .add(HttpApiEndpoint.get("broken", "/broken").addSuccess(Schema.String))
  )
  .addError(HTTPValidationError)
  .annotate(OpenApi.Transform, fastApiConventions)

const TestApiLive = HttpApiBuilder.api(TestApi).pipe(
  Layer.provide(HttpApiBuilder.group(TestApi, "items", (handlers) =>
    handlers
      .handle("createItem", ({ payload }) => Effect.succeed(payload))
      // A decode failure inside a handler is Hangar's bug, not the client's: 500, not 422. The
      // cast lets through the untyped failure such a bug would produce.
      .handle("broken", () => Schema.decodeUnknown(Schema.String)(42) as Effect.Effect<string>)))
)

const server = serveApi(TestApi, TestApiLive).pipe(
  Layer.provideMerge(NodeServer.layerTest(() => createServer())),
  Layer.provide(quiet)
)

const post = (path: string, body: string, contentType = "application/json") =>
  send(HttpClientRequest.post(path).pipe(HttpClientRequest.bodyText(body, contentType))).pipe(Effect.flatMap(json))

const valid = { name: "box", count: 2, kind: "a" }

describe("422 validation errors in the FastAPI shape", () => {
  it.effect("a valid request passes", () =>
    Effect.gen(function*() {
      const { body, status } = yield* post("/items/x1?limit=5", JSON.stringify(valid))
      expect(status).toBe(200)
      expect(body).toEqual(valid)
    }).pipe(Effect.provide(server)))

  it.effect("a wrong type: loc names the field, type says what was expected", () =>
    Effect.gen(function*() {
      const { body, status } = yield* post("/items/x1", JSON.stringify({ ...valid, count: "two" }))
      expect(status).toBe(422)
      expect(body).toEqual({
        detail: [{ loc: ["body", "count"], msg: "Input should be a valid integer", type: "int_type", input: "two", ctx: {} }]
      })
    }).pipe(Effect.provide(server)))

  it.effect("a missing field: type missing, the object it is missing from as input", () =>
    Effect.gen(function*() {
      const { body, status } = yield* post("/items/x1", JSON.stringify({ count: 1, kind: "b" }))
      expect(status).toBe(422)
      expect(body.detail).toEqual([
        { loc: ["body", "name"], msg: "Field required", type: "missing", input: { count: 1, kind: "b" }, ctx: {} }
      ])
    }).pipe(Effect.provide(server)))

  it.effect("a refinement failure carries its constraint in ctx", () =>
    Effect.gen(function*() {
      const { body, status } = yield* post("/items/x1", JSON.stringify({ ...valid, name: "far too long" }))
      expect(status).toBe(422)
      expect(body.detail).toEqual([{
        loc: ["body", "name"],
        msg: "String should have at most 5 characters",
        type: "string_too_long",
        input: "far too long",
        ctx: { max_length: 5 }
      }])
    }).pipe(Effect.provide(server)))

  it.effect("an enum value outside the allowed set", () =>
    Effect.gen(function*() {
      const { body } = yield* post("/items/x1", JSON.stringify({ ...valid, kind: "c" }))
      expect(body.detail).toEqual([{
        loc: ["body", "kind"],
        msg: "Input should be 'a' or 'b'",
        type: "enum",
        input: "c",
        ctx: { expected: "'a' or 'b'" }
      }])
    }).pipe(Effect.provide(server)))

  it.effect("an unknown field is refused where the schema forbids extras", () =>
    Effect.gen(function*() {
      const { body } = yield* post("/items/x1", JSON.stringify({ ...valid, colour: "red" }))
      expect(body.detail).toEqual([{
        loc: ["body", "colour"],
        msg: "Extra inputs are not permitted",
        type: "extra_forbidden",
        input: "red",
        ctx: {}
      }])
    }).pipe(Effect.provide(server)))

  it.effect("malformed JSON is a 422 json_invalid, never a 400 or 500", () =>
    Effect.gen(function*() {
      const { body, status } = yield* post("/items/x1", "{\"name\": \"box\",")
      expect(status).toBe(422)
      expect(body.detail).toHaveLength(1)
      expect(body.detail[0]).toMatchObject({ type: "json_invalid", msg: "JSON decode error", input: {} })
      expect(body.detail[0].loc[0]).toBe("body")
      expect(body.detail[0].loc[1]).toMatch(/^\d+$/)
      expect(typeof body.detail[0].ctx.error).toBe("string")
    }).pipe(Effect.provide(server)))

  it.effect("an empty body where one is required: body missing", () =>
    Effect.gen(function*() {
      const { body, status } = yield* post("/items/x1", "")
      expect(status).toBe(422)
      expect(body.detail).toEqual([{ loc: ["body"], msg: "Field required", type: "missing", input: null, ctx: {} }])
    }).pipe(Effect.provide(server)))

  it.effect("every failing field of every section is reported, path then query then body", () =>
    Effect.gen(function*() {
      const { body, status } = yield* post(
        "/items/much-too-long-id?limit=abc",
        JSON.stringify({ name: 7, count: 1.5, kind: "a", tags: ["ok", 3] })
      )
      expect(status).toBe(422)
      expect(body.detail.map((item: any) => [item.loc, item.type])).toEqual([
        [["path", "item_id"], "string_too_long"],
        [["query", "limit"], "int_parsing"],
        [["body", "name"], "string_type"],
        [["body", "count"], "int_from_float"],
        [["body", "tags", "1"], "string_type"]
      ])
    }).pipe(Effect.provide(server)))

  it.effect("a query bound is reported with its limit", () =>
    Effect.gen(function*() {
      const { body } = yield* post("/items/x1?limit=500", JSON.stringify(valid))
      expect(body.detail).toEqual([{
        loc: ["query", "limit"],
        msg: "Input should be less than or equal to 100",
        type: "less_than_equal",
        input: 500,
        ctx: { le: 100 }
      }])
    }).pipe(Effect.provide(server)))

  it.effect("a decode failure inside a handler is a 500 that leaks nothing", () =>
    Effect.gen(function*() {
      const { body, status } = yield* Effect.flatMap(get("/broken"), json)
      expect(status).toBe(500)
      expect(body).toEqual({ detail: "Internal Server Error" })
    }).pipe(Effect.provide(server)))

  it("the OpenAPI document declares the 422 body and no 400 decode error", () => {
    const spec = OpenApi.fromApi(TestApi) as any
    const operation = spec.paths["/items/{item_id}"].post
    expect(Object.keys(operation.responses).sort()).toEqual(["200", "422"])
    expect(operation.responses["422"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/HTTPValidationError"
    })
    expect(spec.components.schemas.HTTPValidationError).toEqual({
      description: "Validation Error",
      type: "object",
      required: ["detail"],
      properties: { detail: { type: "array", items: { $ref: "#/components/schemas/ValidationError" } } },
      additionalProperties: false
    })
    expect(spec.components.schemas.ValidationError.required).toEqual(["loc", "msg", "type", "input", "ctx"])
    expect(spec.components.schemas.HttpApiDecodeError).toBeUndefined()
    // No input, no 422.
    expect(Object.keys(spec.paths["/broken"].get.responses)).toEqual(["200"])
  })
})

describe("unknown routes", () => {
  it.effect("an unknown path is a 404 {detail: Not Found}", () =>
    Effect.gen(function*() {
      expect(yield* Effect.flatMap(get("/no/such/path"), json)).toEqual({ status: 404, body: { detail: "Not Found" } })
    }).pipe(Effect.provide(testServer())))

  it.effect("a known path with another method is a 405 naming the allowed ones", () =>
    Effect.gen(function*() {
      const response = yield* send(HttpClientRequest.del("/api/v1/web-client/config"))
      expect(response.status).toBe(405)
      expect(response.headers.allow).toBe("GET")
      expect(yield* response.json).toEqual({ detail: "Method Not Allowed" })
    }).pipe(Effect.provide(testServer())))
})
