import * as Etag from "@effect/platform/Etag"
import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiScalar from "@effect/platform/HttpApiScalar"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpPlatform from "@effect/platform/HttpPlatform"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { createServer } from "node:http"
import { HangarApi } from "./Api.js"
import type { RequestValidationError } from "./api/Errors.js"
import { AppConfig } from "./AppConfig.js"
import { ConfigHttpLive } from "./http/ConfigHttp.js"
import { OperationsHttpLive } from "./http/OperationsHttp.js"
import { errorResponses } from "./http/ErrorResponses.js"
import { isolate } from "./http/Isolation.js"
import * as NodeServer from "./http/NodeServer.js"
import { requestLog } from "./http/RequestLog.js"
import * as Logging from "./Logging.js"
import { AgentProfilesHttpLive } from "./http/AgentProfilesHttp.js"
import { AuthenticationLive } from "./http/AuthenticationLive.js"
import { KeysHttpLive } from "./http/KeysHttp.js"
import { LlmProfilesHttpLive } from "./http/LlmProfilesHttp.js"
import { OrganizationsHttpLive } from "./http/OrganizationsHttp.js"
import { SettingsHttpLive } from "./http/SettingsHttp.js"
import { AgentProfilesLive } from "./services/AgentProfiles.js"
import { ApiKeysLive } from "./services/ApiKeys.js"
import { AuthenticatorLive } from "./services/Authenticator.js"
import { AuthRateLimiterLive } from "./services/AuthRateLimiter.js"
import { BootstrapLive } from "./services/Bootstrap.js"
import { LlmProfilesLive } from "./services/LlmProfiles.js"
import { SecretBoxLive } from "./services/SecretBox.js"
import { SettingsLive } from "./services/Settings.js"
import { FilesHttpLive } from "./http/FilesHttp.js"
import { SandboxesHttpLive } from "./http/SandboxesHttp.js"
import { SandboxSpecsHttpLive } from "./http/SandboxSpecsHttp.js"
import { MemoryDriver } from "./sandbox/MemoryDriver.js"
import { ProcessDriver } from "./sandbox/ProcessDriver.js"
import { PublicUrl } from "./services/PublicUrl.js"
import { SandboxesLive } from "./services/Sandboxes.js"
import { Authentication } from "./api/Security.js"
import { SessionKeyAuthentication } from "./api/WebhooksApi.js"
import { AgentProfiles } from "./services/AgentProfiles.js"
import { ApiKeys } from "./services/ApiKeys.js"
import { LlmProfiles } from "./services/LlmProfiles.js"
import { Sandboxes } from "./services/Sandboxes.js"
import { Settings } from "./services/Settings.js"
import { IdentityStore } from "./storage/IdentityStore.js"
import { StorageHealth } from "./storage/StorageHealth.js"
import { ConversationsHttpLive } from "./http/ConversationsHttp.js"
import { QuotaHttpLive } from "./http/QuotaHttp.js"
import { SessionKeyAuthenticationLive, WebhooksHttpLive } from "./http/WebhooksHttp.js"
import { HttpAgentServerClient } from "./sandbox/HttpAgentServerClient.js"
import { MemoryAgentServerClient } from "./sandbox/MemoryAgentServerClient.js"
import { Conversations, ConversationsLive } from "./services/Conversations.js"
import { DailyQuota, DailyQuotaLive } from "./services/DailyQuota.js"
import { StartTasks, StartTasksLive } from "./services/StartTasks.js"
import { StorageLive } from "./storage/Storage.js"

/**
 * Serves an HttpApi with Hangar's HTTP conventions: request log, FastAPI-shaped errors, the
 * OpenAPI document at `/openapi.json` and the reference page at `/docs`.
 */
export const serveApi = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R, LE, LR>(
  api: HttpApi.HttpApi<Id, Groups, E | RequestValidationError, R>,
  implementation: Layer.Layer<HttpApi.Api, LE, LR>
) =>
  HttpApiBuilder.serve(requestLog).pipe(
    // No trace exporter is configured, so a span per request would be built for nobody.
    HttpMiddleware.withTracerDisabledWhen(() => true),
    Layer.provide(HttpApiScalar.layer({ path: "/docs" })),
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" })),
    Layer.provide(errorResponses(api)),
    Layer.provide(routerConfig),
    // The server's context is copied for every request: it holds what serving needs, no more.
    isolate(HttpServer.HttpServer, HttpApi.Api, HttpPlatform.HttpPlatform, Etag.Generator, FileSystem.FileSystem, Path.Path),
    Layer.provide(implementation)
  )

/**
 * The router matches path parameters of any length (find-my-way stops at 100 characters by
 * default): a parameter's schema judges it, so an over-long id is a 422 that says so, not a 404.
 * Node's limit on the request line bounds the length anyway.
 */
const routerConfig = HttpRouter.setRouterConfig({ maxParamLength: Number.MAX_SAFE_INTEGER })

/** The sandbox driver as configured: real processes on this machine, or pretend ones. */
export const SandboxDriverLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) => (config.sandboxDriver === "process" ? ProcessDriver : MemoryDriver))
)

/** Agent servers as the driver runs them: real ones over HTTP, or the pretend ones of pretend sandboxes. */
export const AgentServerClientLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) => (config.sandboxDriver === "process" ? HttpAgentServerClient : MemoryAgentServerClient))
)

/** `HANGAR_PUBLIC_URL`, else the loopback address of the port this server listens on. */
export const PublicUrlLive = Layer.effect(
  PublicUrl,
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (Option.isSome(config.publicUrl)) return { url: config.publicUrl.value }
    const { address } = yield* HttpServer.HttpServer
    return { url: `http://127.0.0.1:${address._tag === "TcpAddress" ? address.port : config.port}` }
  })
)

/** The services behind the handlers, over the storage ports. */
export const ServicesLive = Layer.mergeAll(StartTasksLive, ConversationsLive).pipe(
  Layer.provideMerge(Layer.mergeAll(
    AuthenticatorLive,
    AgentProfilesLive,
    LlmProfilesLive,
    SettingsLive,
    SandboxesLive,
    DailyQuotaLive
  )),
  Layer.provideMerge(
    Layer.mergeAll(ApiKeysLive, AuthRateLimiterLive, SecretBoxLive, SandboxDriverLive, PublicUrlLive, AgentServerClientLive)
  )
)

/** Every route of Hangar, on whichever `HttpServer` is provided. */
export const HttpAppLive = serveApi(
  HangarApi,
  HttpApiBuilder.api(HangarApi).pipe(
    // Each group's build context is merged into every request it serves: it holds what the
    // group uses, no more. (The router it registers with is shared through the memo map.)
    Layer.provide([
      ConfigHttpLive.pipe(isolate(AppConfig)),
      KeysHttpLive.pipe(isolate(Authentication, ApiKeys, IdentityStore)),
      OrganizationsHttpLive.pipe(isolate(Authentication, ApiKeys, IdentityStore)),
      AgentProfilesHttpLive.pipe(isolate(Authentication, AgentProfiles)),
      LlmProfilesHttpLive.pipe(isolate(Authentication, LlmProfiles)),
      SettingsHttpLive.pipe(isolate(Authentication, Settings)),
      SandboxSpecsHttpLive.pipe(isolate(Authentication, Sandboxes)),
      SandboxesHttpLive.pipe(isolate(Authentication, Sandboxes)),
      FilesHttpLive.pipe(isolate(Authentication, Sandboxes)),
      ConversationsHttpLive.pipe(isolate(Authentication, Conversations, StartTasks)),
      QuotaHttpLive.pipe(isolate(Authentication, DailyQuota)),
      WebhooksHttpLive.pipe(isolate(SessionKeyAuthentication, Conversations)),
      OperationsHttpLive.pipe(isolate(StorageHealth))
    ]),
    Layer.provide([AuthenticationLive, SessionKeyAuthenticationLive])
  )
)

/** The app with its services on the given storage, serving once bootstrapped. */
export const AppLive = HttpAppLive.pipe(
  Layer.provide(BootstrapLive),
  Layer.provide(ServicesLive)
)

/**
 * The Node listener on PORT/HOST. The port opens before the app is ready (requests get 503 until
 * it is); on shutdown it stops accepting and lets requests in flight finish, at most 10 s.
 */
export const NodeServerLive = Layer.unwrapEffect(Effect.map(AppConfig, ({ host, port }) =>
  NodeServer.layer(createServer(), { host, port, shutdownGrace: "10 seconds" })
))

const LogAddress = Layer.effectDiscard(
  HttpServer.addressFormattedWith((address) => Effect.logInfo(`listening on ${address}`))
)

/** The whole server as `npm start` runs it. */
export const ServerLive = LogAddress.pipe(
  Layer.provide(AppLive),
  Layer.provide(StorageLive),
  Layer.provide(NodeServerLive),
  Layer.provide(Layer.unwrapEffect(Effect.map(AppConfig, (config) => Logging.layer(config.logLevel)))),
  Layer.provideMerge(AppConfig.layer)
)
