import { HttpApiClient, HttpClient, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { ConfigProvider, Effect, Layer, Logger, LogLevel } from "effect"
import { HangarApi } from "../../src/Api.js"
import { AppConfig } from "../../src/AppConfig.js"
import { HttpAppLive, ServicesLive } from "../../src/Server.js"

/** The configuration as if these were the only environment variables set. */
export const env = (vars: Record<string, string> = {}) =>
  Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(vars))))

export const quiet = Logger.minimumLogLevel(LogLevel.None)

/**
 * The real Hangar HTTP app on a random local port (`NodeHttpServer.layerTest`), with an
 * `HttpClient` aimed at it, configured from `vars` only.
 */
export const testServer = (vars: Record<string, string> = {}) =>
  HttpAppLive.pipe(
    Layer.provide(ServicesLive),
    Layer.provideMerge(NodeHttpServer.layerTest),
    Layer.provideMerge(AppConfig.layer),
    Layer.provide(env(vars)),
    Layer.provide(quiet)
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
