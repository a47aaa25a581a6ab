import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import { HangarApi } from "../../src/Api.js"
import { AppConfig } from "../../src/AppConfig.js"
import * as Logging from "../../src/Logging.js"
import * as NodeServer from "../../src/http/NodeServer.js"
import { AppLive } from "../../src/Server.js"
import { createServer } from "node:http"
import { MemoryStorage, type Stores } from "../../src/storage/Storage.js"

/** The configuration as if these were the only environment variables set. */
export const env = (vars: Record<string, string> = {}) =>
  Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(vars))))

export const quiet = Logger.minimumLogLevel(LogLevel.None)

/** Every log line the app writes, at every level, collected instead of printed. */
export const captureLogs = () => {
  const lines: Array<string> = []
  const layer = Layer.merge(
    Logger.replace(Logger.defaultLogger, Logging.jsonLineLogger((line) => lines.push(line))),
    Logger.minimumLogLevel(LogLevel.All)
  )
  return { lines, layer }
}

/** The key `testServer` bootstraps the `admin` owner of organisation `default` with. */
export const ADMIN_KEY = "hgr_test-admin-key-0123456789abcdef"

/**
 * The real Hangar app on a random local port (`NodeServer.layerTest`), with an `HttpClient`
 * aimed at it, configured from `vars` only (plus a known bootstrap key and, unless a test sets
 * them, no auth rate limit and the memory sandbox driver), on memory storage unless another is given.
 */
export const testServer = <E, Extra = never>(
  vars: Record<string, string> = {},
  storage: Layer.Layer<Stores | Extra, E> = MemoryStorage as Layer.Layer<Stores | Extra, E>,
  logging: Layer.Layer<never> = quiet
) =>
  AppLive.pipe(
    Layer.provideMerge(storage),
    Layer.provideMerge(NodeServer.layerTest(() => createServer())),
    Layer.provideMerge(AppConfig.layer),
    Layer.provide(env({
      HANGAR_BOOTSTRAP_API_KEY: ADMIN_KEY,
      HANGAR_AUTH_RATE_LIMIT: "",
      HANGAR_SANDBOX_DRIVER: "memory",
      ...vars
    })),
    Layer.provide(logging)
  )

/** The typed client generated from the same HttpApi definition. */
export const client = HttpApiClient.make(HangarApi)

/** A raw request, for asserting exact statuses, headers and bodies. */
export const send = (request: HttpClientRequest.HttpClientRequest) =>
  Effect.flatMap(HttpClient.HttpClient, (http) => http.execute(request))

export const json = (response: HttpClientResponse.HttpClientResponse) =>
  Effect.map(response.json, (body) => ({ status: response.status, body: body as any }))

export const get = (path: string, headers: Record<string, string> = {}) =>
  send(HttpClientRequest.get(path).pipe(HttpClientRequest.setHeaders(headers)))

export interface CallOptions {
  /** Sent as `X-Access-Token`. */
  readonly token?: string
  /** Sent as `Authorization: Bearer`. */
  readonly bearer?: string
  /** Sent as the `api_key` cookie. */
  readonly cookie?: string
  /** Sent as `X-Org-Id`. */
  readonly orgId?: string
  /** Sent as JSON. */
  readonly body?: unknown
  readonly headers?: Record<string, string>
}

/** A request with the usual credentials, answered as `{status, body}` (body null for 204). */
export const call = (method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE", path: string, options: CallOptions = {}) => {
  const headers: Record<string, string> = { ...options.headers }
  if (options.token !== undefined) headers["x-access-token"] = options.token
  if (options.bearer !== undefined) headers.authorization = `Bearer ${options.bearer}`
  if (options.cookie !== undefined) headers.cookie = `api_key=${options.cookie}`
  if (options.orgId !== undefined) headers["x-org-id"] = options.orgId
  let request = HttpClientRequest.make(method)(path).pipe(HttpClientRequest.setHeaders(headers))
  if (options.body !== undefined) request = HttpClientRequest.bodyUnsafeJson(request, options.body)
  return Effect.flatMap(send(request), (response) =>
    response.status === 204 || response.status === 304
      ? Effect.succeed({ status: response.status, body: null as any })
      : json(response))
}
