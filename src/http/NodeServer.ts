import * as Cookies from "@effect/platform/Cookies"
import * as Etag from "@effect/platform/Etag"
import * as FileSystem from "@effect/platform/FileSystem"
import type * as Headers from "@effect/platform/Headers"
import * as HttpApp from "@effect/platform/HttpApp"
import type * as HttpPlatform from "@effect/platform/HttpPlatform"
import * as IncomingMessage from "@effect/platform/HttpIncomingMessage"
import type { HttpMethod } from "@effect/platform/HttpMethod"
import type * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as Multipart from "@effect/platform/Multipart"
import type * as Path from "@effect/platform/Path"
import type * as Socket from "@effect/platform/Socket"
import * as UrlParams from "@effect/platform/UrlParams"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpPlatform from "@effect/platform-node/NodeHttpPlatform"
import * as NodeMultipart from "@effect/platform-node/NodeMultipart"
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Inspectable from "effect/Inspectable"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { ReadonlyRecord } from "effect/Record"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { Readable } from "node:stream"

/**
 * Hangar's Node HTTP server: the `HttpServer` the HttpApi is served on.
 *
 * It does what `@effect/platform-node`'s server does for each request (an `HttpServerRequest` over
 * the Node request, a fiber running the app, pre-response handlers applied, the response
 * written, the fiber interrupted when the client goes away), with less around it: the response is
 * written when the fiber completes, from its observer, instead of by more effects inside it; no
 * span is opened (no trace exporter is configured); no WebSocket upgrades (Hangar serves none).
 * Measured with `npm run bench`, that was about a third of a request's cost. The request class is
 * adapted from `@effect/platform-node` (MIT).
 */
export interface Options {
  readonly host: string
  readonly port: number
  /**
   * On shutdown, how long requests in flight may take to finish before their connections are
   * closed (10 s unless given).
   */
  readonly shutdownGrace?: Duration.DurationInput
}

export const layer = (
  server: Http.Server,
  options: Options
): Layer.Layer<
  HttpServer.HttpServer | HttpPlatform.HttpPlatform | Etag.Generator | NodeContext.NodeContext,
  HttpServerError.ServeError
> =>
  Layer.mergeAll(
    Layer.scoped(HttpServer.HttpServer, make(server, options)),
    NodeHttpPlatform.layer,
    Etag.layerWeak,
    NodeContext.layer
  )

/** The server on a free local port, and an `HttpClient` aimed at it (as `NodeHttpServer.layerTest`). */
export const layerTest = (server: () => Http.Server) =>
  HttpServer.layerTestClient.pipe(
    Layer.provide(NodeHttpClient.layerWithoutAgent),
    Layer.provide(NodeHttpClient.makeAgentLayer({ keepAlive: false })),
    Layer.provideMerge(Layer.unwrapEffect(Effect.sync(() => layer(server(), { host: "127.0.0.1", port: 0 }))))
  )

/**
 * Answers while no app is served: before the app is ready (the port is open while storage still
 * starts, and a readiness probe must get an answer, not a hung connection) and after shutdown began.
 */
const unavailable: Http.RequestListener = (_request, response) => {
  response.shouldKeepAlive = false
  response.writeHead(503, { "content-type": "application/json", "retry-after": "1" })
  response.end(JSON.stringify({ detail: "Service Unavailable" }))
}

const make = (server: Http.Server, options: Options) =>
  Effect.gen(function*() {
    const grace = Duration.toMillis(Duration.decode(options.shutdownGrace ?? "10 seconds"))
    let current: Http.RequestListener = unavailable
    const dispatch: Http.RequestListener = (request, response) => current(request, response)
    yield* Effect.acquireRelease(
      Effect.async<void, HttpServerError.ServeError>((resume) => {
        const failed = (cause: Error) => resume(Effect.fail(new HttpServerError.ServeError({ cause })))
        server.once("error", failed)
        server.on("request", dispatch)
        server.listen(options.port, options.host, () => {
          server.off("error", failed)
          resume(Effect.void)
        })
      }),
      () =>
        Effect.async<void>((resume) => {
          if (!server.listening) return resume(Effect.void)
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    )
    const address = server.address() as AddressInfo
    return HttpServer.make({
      address: { _tag: "TcpAddress", hostname: address.address === "::" ? "0.0.0.0" : address.address, port: address.port },
      serve: (app, middleware?: HttpMiddleware.HttpMiddleware) =>
        Effect.gen(function*() {
          let inFlight = 0
          let drained: (() => void) | undefined
          const handler = yield* makeHandler(middleware ? middleware(app) : app, () => {
            if (--inFlight === 0) drained?.()
          }).pipe(
            // As the platform's server: request bodies of at most 10 MB (then 413, see ErrorResponses).
            Effect.provideService(IncomingMessage.MaxBodySize, Option.some(FileSystem.Size(10 * 1024 * 1024)))
          )
          current = (request, response) => {
            inFlight++
            // Once shutdown began, a request on a kept-alive connection is the connection's last.
            if (!server.listening) response.shouldKeepAlive = false
            handler(request, response)
          }
          // Shutdown, which runs before the services the app uses are released: stop accepting
          // connections, let the requests in flight finish (at most `grace`), then close what is
          // left, so that no request is cut off while the app could still answer it.
          yield* Effect.addFinalizer(() =>
            Effect.async<void>((resume) => {
              server.close()
              server.closeIdleConnections()
              const finish = () => {
                clearTimeout(timer)
                drained = undefined
                current = unavailable
                server.closeAllConnections()
                resume(Effect.void)
              }
              const timer = setTimeout(finish, grace)
              if (inFlight === 0) finish()
              else drained = finish
            })
          )
        })
    } as Parameters<typeof HttpServer.make>[0])
  })

/** `closed` is called once per request, when its response is finished or its client went away. */
const makeHandler = <E, R>(app: HttpApp.Default<E, R>, closed: () => void) =>
  Effect.map(Effect.runtime<Exclude<R, HttpServerRequest.HttpServerRequest | Scope.Scope>>(), (runtime) => {
    const runFork = Runtime.runFork(runtime)
    // The app's response, with the pre-response handlers the request registered applied to it.
    const responded = Effect.withFiberRuntime<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest>(
      (fiber) =>
        Effect.flatMap(app, (response) => {
          const handlers = fiber.getFiberRef(HttpApp.currentPreResponseHandlers)
          if (handlers._tag === "None") return Effect.succeed(response)
          const request = fiber.currentContext.unsafeMap.get(HttpServerRequest.HttpServerRequest.key)
          return handlers.value(request, response) as Effect.Effect<HttpServerResponse.HttpServerResponse>
        })
    )
    return (nodeRequest: Http.IncomingMessage, nodeResponse: Http.ServerResponse) => {
      const request = new NodeServerRequest(nodeRequest, nodeResponse)
      const fiber = runFork(
        Effect.provideService(responded, HttpServerRequest.HttpServerRequest, request) as Effect.Effect<
          HttpServerResponse.HttpServerResponse,
          E,
          never
        >
      )
      fiber.addObserver((exit) => {
        if (Exit.isSuccess(exit)) return write(request, exit.value)
        // What the app did not answer itself (it answers everything but a client that went away).
        Effect.runFork(Effect.flatMap(HttpServerError.causeResponse(exit.cause), ([response]) => Effect.sync(() => write(request, response))))
      })
      nodeResponse.on("close", () => {
        closed()
        if (!nodeResponse.writableEnded) fiber.unsafeInterruptAsFork(HttpServerError.clientAbortFiberId)
      })
    }
  })

const write = (request: NodeServerRequest, response: HttpServerResponse.HttpServerResponse): void => {
  const nodeResponse = request.response
  if (nodeResponse.writableEnded || nodeResponse.headersSent) return
  let headers: Record<string, string | Array<string>> = response.headers
  if (!Cookies.isEmpty(response.cookies)) {
    const cookies = Cookies.toSetCookieHeaders(response.cookies)
    headers = { ...headers, "set-cookie": headers["set-cookie"] === undefined ? cookies : [...cookies, headers["set-cookie"] as string] }
  }
  const body = response.body
  if (request.method === "HEAD") {
    nodeResponse.writeHead(response.status, headers)
    nodeResponse.end()
    return
  }
  switch (body._tag) {
    case "Empty":
      nodeResponse.writeHead(response.status, headers)
      nodeResponse.end()
      return
    case "Uint8Array":
      nodeResponse.writeHead(response.status, headers)
      nodeResponse.end(body.body)
      return
    case "Raw":
      nodeResponse.writeHead(response.status, headers)
      if (body.body instanceof Readable) {
        body.body.pipe(nodeResponse)
      } else {
        nodeResponse.end(body.body as string | Uint8Array)
      }
      return
    case "FormData": {
      const web = new Response(body.formData)
      nodeResponse.writeHead(response.status, { ...headers, ...Object.fromEntries(web.headers) })
      Readable.fromWeb(web.body as any).pipe(nodeResponse)
      return
    }
    case "Stream":
      nodeResponse.writeHead(response.status, headers)
      Effect.runFork(
        body.stream.pipe(
          Stream.runForEachChunk((chunk) =>
            Effect.async<void>((resume) => {
              const parts = Chunk.toReadonlyArray(chunk)
              let pending = parts.length
              if (pending === 0) return resume(Effect.void)
              for (const part of parts) nodeResponse.write(part, () => --pending === 0 && resume(Effect.void))
            })
          ),
          Effect.ensuring(Effect.sync(() => nodeResponse.end()))
        )
      )
      return
  }
}

/** An `HttpServerRequest` over a Node request (adapted from `@effect/platform-node`, MIT). */
class NodeServerRequest extends Inspectable.Class implements HttpServerRequest.HttpServerRequest {
  readonly [HttpServerRequest.TypeId]: HttpServerRequest.TypeId = HttpServerRequest.TypeId
  readonly [IncomingMessage.TypeId]: IncomingMessage.TypeId = IncomingMessage.TypeId

  constructor(
    readonly source: Http.IncomingMessage,
    readonly response: Http.ServerResponse,
    readonly url: string = source.url!,
    private headersOverride?: Headers.Headers,
    private readonly remoteAddressOverride?: string
  ) {
    super()
  }

  private readonly onError = (cause: unknown) =>
    new HttpServerError.RequestError({ request: this, reason: "Decode", cause })

  get originalUrl(): string {
    return this.source.url!
  }

  get method(): HttpMethod {
    return this.source.method!.toUpperCase() as HttpMethod
  }

  get headers(): Headers.Headers {
    this.headersOverride ??= this.source.headers as Headers.Headers
    return this.headersOverride
  }

  private cachedCookies: ReadonlyRecord<string, string> | undefined
  get cookies(): ReadonlyRecord<string, string> {
    return this.cachedCookies ??= Cookies.parseHeader(this.headers.cookie ?? "")
  }

  get remoteAddress(): Option.Option<string> {
    return Option.fromNullable(this.remoteAddressOverride ?? this.source.socket.remoteAddress)
  }

  private bodyEffect: Effect.Effect<Buffer, HttpServerError.RequestError> | undefined
  /**
   * The whole body, read once. Over the size limit it stops keeping what arrives, discards the
   * rest and fails ("maxBytes exceeded", answered 413) without destroying the connection, so the
   * client still gets the answer.
   */
  private get body(): Effect.Effect<Buffer, HttpServerError.RequestError> {
    return this.bodyEffect ??= Effect.runSync(Effect.cached(Effect.flatMap(IncomingMessage.MaxBodySize, (maxBodySize) =>
      Effect.async<Buffer, HttpServerError.RequestError>((resume) => {
        const limit = Option.match(maxBodySize, { onNone: () => Infinity, onSome: Number })
        const chunks: Array<Buffer> = []
        let size = 0
        const done = () => {
          this.source.off("data", onData)
          this.source.off("end", onEnd)
          this.source.off("error", onFailure)
        }
        const onData = (chunk: Buffer) => {
          size += chunk.length
          if (size <= limit) return void chunks.push(chunk)
          done()
          this.source.resume()
          resume(Effect.fail(this.onError(new Error("maxBytes exceeded"))))
        }
        const onEnd = () => {
          done()
          resume(Effect.succeed(Buffer.concat(chunks)))
        }
        const onFailure = (error: Error) => {
          done()
          resume(Effect.fail(this.onError(error)))
        }
        this.source.on("data", onData)
        this.source.once("end", onEnd)
        this.source.once("error", onFailure)
      }))))
  }

  get text(): Effect.Effect<string, HttpServerError.RequestError> {
    return Effect.map(this.body, (body) => body.toString("utf8"))
  }

  get json(): Effect.Effect<unknown, HttpServerError.RequestError> {
    return Effect.tryMap(this.text, { try: (text) => (text === "" ? null : JSON.parse(text) as unknown), catch: this.onError })
  }

  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpServerError.RequestError> {
    return Effect.flatMap(this.text, (text) =>
      Effect.try({ try: () => UrlParams.fromInput(new URLSearchParams(text)), catch: this.onError }))
  }

  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpServerError.RequestError> {
    return Effect.map(this.body, (body) => body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer)
  }

  get stream(): Stream.Stream<Uint8Array, HttpServerError.RequestError> {
    return NodeStream.fromReadable<HttpServerError.RequestError, Uint8Array>(() => this.source, this.onError)
  }

  private multipartEffect:
    | Effect.Effect<Multipart.Persisted, Multipart.MultipartError, Scope.Scope | FileSystem.FileSystem | Path.Path>
    | undefined
  get multipart(): Effect.Effect<Multipart.Persisted, Multipart.MultipartError, Scope.Scope | FileSystem.FileSystem | Path.Path> {
    return this.multipartEffect ??= Effect.runSync(Effect.cached(NodeMultipart.persisted(this.source, this.source.headers)))
  }

  get multipartStream(): Stream.Stream<Multipart.Part, Multipart.MultipartError> {
    return NodeMultipart.stream(this.source, this.source.headers)
  }

  get upgrade(): Effect.Effect<Socket.Socket, HttpServerError.RequestError> {
    return Effect.fail(
      new HttpServerError.RequestError({ request: this, reason: "Decode", description: "Hangar serves no WebSocket upgrades" })
    )
  }

  modify(options: { readonly url?: string; readonly headers?: Headers.Headers; readonly remoteAddress?: string }) {
    return new NodeServerRequest(
      this.source,
      this.response,
      options.url ?? this.url,
      options.headers ?? this.headersOverride,
      options.remoteAddress ?? this.remoteAddressOverride
    )
  }

  override toString(): string {
    return `ServerRequest(${this.method} ${this.url})`
  }

  toJSON(): unknown {
    return IncomingMessage.inspect(this, { _id: "@effect/platform/HttpServerRequest", method: this.method, url: this.originalUrl })
  }
}

