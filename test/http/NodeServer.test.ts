import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { createServer } from "node:http"
import { request as httpRequest } from "node:http"
import { HTTPValidationError } from "../../src/api/Errors.js"
import * as NodeServer from "../../src/http/NodeServer.js"
import { serveApi } from "../../src/Server.js"
import { json, quiet, send } from "../support/TestServer.js"

// Hangar's own Node server adapter, through a test-only API: what the platform's server did and
// this one must keep doing.
const interrupted = Effect.runSync(Deferred.make<void>())

const TestApi = HttpApi.make("test")
  .add(
    HttpApiGroup.make("things")
      .add(HttpApiEndpoint.get("thing", "/thing").addSuccess(Schema.Struct({ ok: Schema.Boolean })))
      .add(HttpApiEndpoint.post("upload", "/upload").setPayload(Schema.Struct({ data: Schema.String })).addSuccess(Schema.Number))
      .add(HttpApiEndpoint.get("cookie", "/cookie").addSuccess(Schema.String))
      .add(HttpApiEndpoint.get("stream", "/stream").addSuccess(Schema.String))
      .add(HttpApiEndpoint.get("slow", "/slow").addSuccess(Schema.String))
  )
  .addError(HTTPValidationError)

const server = serveApi(
  TestApi,
  HttpApiBuilder.api(TestApi).pipe(Layer.provide(HttpApiBuilder.group(TestApi, "things", (handlers) =>
    handlers
      .handle("thing", () => Effect.succeed({ ok: true }))
      .handle("upload", ({ payload }) => Effect.succeed(payload.data.length))
      .handle("cookie", () =>
        HttpServerResponse.text("with cookie").pipe(
          HttpServerResponse.setCookie("session", "abc", { httpOnly: true }),
          Effect.orDie
        ))
      .handle("stream", () =>
        Effect.succeed(HttpServerResponse.stream(Stream.make("a", "b", "c").pipe(Stream.encodeText))))
      .handle("slow", () =>
        Effect.never.pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)))))))
).pipe(Layer.provideMerge(NodeServer.layerTest(() => createServer())), Layer.provide(quiet))

describe("Hangar's Node server", () => {
  it.effect("answers a request with the app's response", () =>
    Effect.gen(function*() {
      expect(yield* Effect.flatMap(send(HttpClientRequest.get("/thing")), json)).toEqual({ status: 200, body: { ok: true } })
    }).pipe(Effect.provide(server)))

  it.effect("answers HEAD like GET, without a body", () =>
    Effect.gen(function*() {
      const response = yield* send(HttpClientRequest.head("/thing"))
      expect(response.status).toBe(200)
      expect(response.headers["content-type"]).toContain("application/json")
      expect(yield* response.text).toBe("")
    }).pipe(Effect.provide(server)))

  it.effect("reads request bodies, and refuses one over 10 MB with 413", () =>
    Effect.gen(function*() {
      const small = yield* send(HttpClientRequest.post("/upload").pipe(HttpClientRequest.bodyUnsafeJson({ data: "x".repeat(1000) })))
      expect(yield* Effect.flatMap(Effect.succeed(small), json)).toEqual({ status: 200, body: 1000 })
      const large = yield* send(
        HttpClientRequest.post("/upload").pipe(HttpClientRequest.bodyUnsafeJson({ data: "x".repeat(11 * 1024 * 1024) }))
      )
      expect(large.status).toBe(413)
    }).pipe(Effect.provide(server)))

  it.effect("writes cookies as Set-Cookie headers, and streamed bodies", () =>
    Effect.gen(function*() {
      const cookie = yield* send(HttpClientRequest.get("/cookie"))
      expect(cookie.headers["set-cookie"]).toContain("session=abc; HttpOnly")
      const streamed = yield* send(HttpClientRequest.get("/stream"))
      expect(yield* streamed.text).toBe("abc")
    }).pipe(Effect.provide(server)))

  it.live("interrupts the request's fiber when the client goes away", () =>
    Effect.gen(function*() {
      const { address } = yield* HttpServer.HttpServer
      const port = address._tag === "TcpAddress" ? address.port : 0
      yield* Effect.async<void>((resume) => {
        const request = httpRequest({ host: "127.0.0.1", port, path: "/slow" })
        request.on("error", () => resume(Effect.void))
        request.end()
        setTimeout(() => request.destroy(), 200)
      })
      yield* Deferred.await(interrupted).pipe(Effect.timeout("5 seconds"))
    }).pipe(Effect.provide(server)))
})
