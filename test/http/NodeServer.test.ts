import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
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

  describe("its lifecycle", () => {
    /** `/wait?ms=N` answers "done" after N ms; anything else "ok" at once. */
    const app = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const wait = /[?&]ms=(\d+)/.exec(request.url)
      if (wait) yield* Effect.sleep(Number(wait[1]))
      return HttpServerResponse.text(wait ? "done" : "ok")
    })

    /** The listener alone (not yet serving), in a scope of its own, and its base URL. */
    const listener = (shutdownGrace: Duration.DurationInput) =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(
          NodeServer.layer(createServer(), { host: "127.0.0.1", port: 0, shutdownGrace }),
          scope
        )
        const { address } = Context.get(context, HttpServer.HttpServer)
        const port = address._tag === "TcpAddress" ? address.port : 0
        return { scope, context, url: `http://127.0.0.1:${port}` }
      })

    const serve = (context: Context.Context<HttpServer.HttpServer>) =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        yield* HttpServer.serve(app).pipe(Layer.buildWithScope(scope), Effect.provide(context))
        return scope
      })

    const get = (url: string) =>
      Effect.tryPromise(async () => {
        const response = await fetch(url)
        return { status: response.status, headers: response.headers, text: await response.text() }
      })

    it.live("answers 503 while the port is open but no app is served yet, and the app once it is", () =>
      Effect.gen(function*() {
        const { context, scope, url } = yield* listener("5 seconds")
        const early = yield* get(`${url}/thing`)
        expect(early.status).toBe(503)
        expect(early.headers.get("retry-after")).toBe("1")
        expect(JSON.parse(early.text)).toEqual({ detail: "Service Unavailable" })
        const served = yield* serve(context)
        expect(yield* get(`${url}/thing`)).toMatchObject({ status: 200, text: "ok" })
        yield* Scope.close(served, Exit.void)
        yield* Scope.close(scope, Exit.void)
      }))

    it.live("on shutdown stops accepting, lets a request in flight finish, then closes", () =>
      Effect.gen(function*() {
        const { context, scope, url } = yield* listener("5 seconds")
        const served = yield* serve(context)
        const inFlight = yield* Effect.fork(get(`${url}/wait?ms=700`))
        yield* Effect.sleep("200 millis")
        const started = Date.now()
        const closing = yield* Effect.fork(Scope.close(served, Exit.void))
        yield* Effect.sleep("100 millis")
        // No new connection is accepted while the one in flight drains.
        const refused = yield* Effect.either(get(`${url}/thing`))
        expect(refused._tag).toBe("Left")
        expect(yield* Fiber.join(inFlight)).toMatchObject({ status: 200, text: "done" })
        yield* Fiber.join(closing)
        const waited = Date.now() - started
        expect(waited).toBeGreaterThanOrEqual(300)
        expect(waited).toBeLessThan(4_000)
        yield* Scope.close(scope, Exit.void)
      }))

    it.live("closes a request still running when the grace period ends", () =>
      Effect.gen(function*() {
        const { context, scope, url } = yield* listener("300 millis")
        const served = yield* serve(context)
        const stuck = yield* Effect.fork(Effect.either(get(`${url}/wait?ms=60000`)))
        yield* Effect.sleep("200 millis")
        const started = Date.now()
        yield* Scope.close(served, Exit.void)
        expect(Date.now() - started).toBeLessThan(3_000)
        expect((yield* Fiber.join(stuck))._tag).toBe("Left")
        yield* Scope.close(scope, Exit.void)
      }))
  })
})
