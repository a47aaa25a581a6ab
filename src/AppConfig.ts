import * as Arr from "effect/Array"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as EnvVar from "./config/EnvVar.js"
import { SandboxSpec, SandboxSpecId } from "./domain/Sandbox.js"
import { builtinSandboxSpec } from "./sandbox/BuiltinSpec.js"
import type { RateWindow } from "./storage/RateLimitStore.js"
import {
  ACPProviderConfig,
  AppMode,
  DeploymentMode,
  featureFlagNames,
  ProviderType,
  WebClientConfig,
  WebClientFeatureFlags
} from "./domain/WebClientConfig.js"

/**
 * Every environment variable Hangar reads, parsed and validated here and nowhere else
 * (SPEC §2). A bad value fails start-up with a `ConfigError` naming the variable.
 */
export interface AppConfigShape {
  readonly port: number
  readonly host: string
  /** Postgres connection string; unset means the embedded database. */
  readonly databaseUrl: Option.Option<Redacted.Redacted<string>>
  readonly storage: "postgres" | "memory"
  readonly dataDir: string
  readonly logLevel: LogLevel.LogLevel
  /** Ensure organisation `default`, owner `admin` and this key at start. */
  readonly bootstrapApiKey: Option.Option<Redacted.Redacted<string>>
  /** Authentication rate-limit windows; none means the limiter is off. */
  readonly authRateLimit: ReadonlyArray<RateWindow>
  /** The key that encrypts stored secrets (AES-256-GCM); see `SecretBox` for when it is generated. */
  readonly secretKey: Option.Option<Redacted.Redacted<Uint8Array>>
  /** Agent profiles an organisation may hold (SPEC §4). */
  readonly maxAgentProfiles: number
  /** LLM profiles a user may hold (SPEC §5). */
  readonly maxLlmProfiles: number
  /** STARTING + RUNNING sandboxes per user, and what happens to a start beyond it. */
  readonly maxConcurrentSandboxes: number
  readonly sandboxLimitPolicy: "reject" | "pause_oldest"
  readonly sandboxDriver: "process" | "memory"
  /** The configured presets, the default first; the built-in preset when none are configured. */
  readonly sandboxSpecs: Arr.NonEmptyReadonlyArray<SandboxSpec>
  readonly sandboxStartTimeout: Duration.Duration
  /** The base URL agent servers reach Hangar at; unset: `http://127.0.0.1:<the port listened on>`. */
  readonly publicUrl: Option.Option<string>
  /** Conversations a user may start per UTC day, unless overridden for them or their organisation; none: unlimited. */
  readonly dailyConversationLimit: Option.Option<number>
  /** `PATH` for sandbox processes (the one variable of Hangar's environment they inherit). */
  readonly sandboxPath: string
  /** The public web-client configuration, `updated_at` being when this configuration was loaded. */
  readonly webClient: WebClientConfig
}

export class AppConfig extends Context.Tag("hangar/AppConfig")<AppConfig, AppConfigShape>() {
  /** Reads the configuration from the current `ConfigProvider` (the environment by default). */
  static readonly layer: Layer.Layer<AppConfig, import("effect").ConfigError.ConfigError> = Layer.effect(
    AppConfig,
    Effect.suspend(() => load)
  )
}

const envName = (field: string) => `HANGAR_${field.toUpperCase()}`

const nullableString = (field: string) =>
  EnvVar.optional(envName(field), EnvVar.string).pipe(Config.map(Option.getOrNull))

/** An optional boolean: unset leaves the field out, so the schema's (the seed's) default applies. */
const flag = (field: string) => EnvVar.optional(envName(field), EnvVar.boolean)

const presentOnly = <A extends Record<string, unknown>>(fields: A) =>
  Object.fromEntries(
    Object.entries(fields).flatMap(([key, value]) =>
      Option.isOption(value) ? (Option.isSome(value) ? [[key, value.value]] : []) : [[key, value]]
    )
  )

const logLevels = {
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  none: LogLevel.None
} as const

const featureFlags = Config.all({
  ...Object.fromEntries(featureFlagNames.map((name) => [name, flag(`feature_${name}`)])),
  deployment_mode: EnvVar.optional("HANGAR_DEPLOYMENT_MODE", EnvVar.literal(...DeploymentMode.literals))
}).pipe(Config.map((flags) => WebClientFeatureFlags.make(presentOnly(flags))))

const webClient = Config.all({
  app_mode: EnvVar.withDefault("HANGAR_APP_MODE", EnvVar.literal(...AppMode.literals), "oss"),
  analytics_client_key: nullableString("analytics_client_key"),
  feature_flags: featureFlags,
  providers_configured: EnvVar.withDefault(
    "HANGAR_PROVIDERS_CONFIGURED",
    EnvVar.commaList(ProviderType, `provider types (${ProviderType.literals.join(", ")})`),
    []
  ),
  maintenance_start_time: EnvVar.optional("HANGAR_MAINTENANCE_START_TIME", EnvVar.timestamp).pipe(
    Config.map(Option.getOrNull)
  ),
  auth_url: nullableString("auth_url"),
  captcha_site_key: nullableString("captcha_site_key"),
  faulty_models: EnvVar.withDefault("HANGAR_FAULTY_MODELS", EnvVar.commaList(Schema.String, "model names"), []),
  error_message: nullableString("error_message"),
  vcs_app_slug: nullableString("vcs_app_slug"),
  vcs_alt_enabled: flag("vcs_alt_enabled"),
  provider_default_hosts: EnvVar.optional(
    "HANGAR_PROVIDER_DEFAULT_HOSTS",
    EnvVar.json(Schema.Record({ key: Schema.String, value: Schema.String }), "an object of provider to host name")
  ),
  chat_enabled: flag("chat_enabled"),
  email_enabled: flag("email_enabled"),
  email_change_enabled: flag("email_change_enabled"),
  acp_providers: EnvVar.optional(
    "HANGAR_ACP_PROVIDERS",
    EnvVar.json(
      Schema.Array(ACPProviderConfig),
      "an array of {key, display_name, default_command, default_model?, available_models?, api_key_env_var?, base_url_env_var?}"
    )
  ),
  tracker_dc_oauth_host: EnvVar.optional(envName("tracker_dc_oauth_host"), EnvVar.string),
  tracker_dc_service_account_managed: flag("tracker_dc_service_account_managed"),
  tracker_dc_service_account_email: EnvVar.optional(envName("tracker_dc_service_account_email"), EnvVar.string),
  tracker_dc_service_account_config_error: EnvVar.optional(
    envName("tracker_dc_service_account_config_error"),
    EnvVar.string
  )
})

const SandboxSpecInput = Schema.Struct({
  id: SandboxSpecId,
  command: Schema.NonEmptyArray(Schema.String.pipe(Schema.minLength(1))),
  initial_env: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.String }), { default: () => ({}) }),
  working_dir: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null })
}).annotations({ parseOptions: { onExcessProperty: "error" } })

const SandboxSpecsInput = Schema.NonEmptyArray(SandboxSpecInput).pipe(
  Schema.filter((specs) => new Set(specs.map((spec) => spec.id)).size === specs.length, {
    message: () => "spec ids must be unique"
  })
)

const sandboxes = Config.all({
  maxConcurrentSandboxes: EnvVar.withDefault("HANGAR_MAX_CONCURRENT_SANDBOXES", EnvVar.integer(1), 5),
  sandboxLimitPolicy: EnvVar.withDefault("HANGAR_SANDBOX_LIMIT_POLICY", EnvVar.literal("reject", "pause_oldest"), "reject"),
  sandboxDriver: EnvVar.withDefault("HANGAR_SANDBOX_DRIVER", EnvVar.literal("process", "memory"), "process"),
  sandboxSpecs: EnvVar.optional(
    "HANGAR_SANDBOX_SPECS",
    EnvVar.jsonOrFile(
      SandboxSpecsInput,
      "a non-empty array of {id, command: [argv…], initial_env?, working_dir?} with unique ids"
    )
  ),
  sandboxStartTimeout: EnvVar.withDefault("HANGAR_SANDBOX_START_TIMEOUT", EnvVar.integer(1), 120).pipe(
    Config.map(Duration.seconds)
  ),
  publicUrl: EnvVar.optional("HANGAR_PUBLIC_URL", EnvVar.url).pipe(
    Config.map(Option.map((url) => url.replace(/\/+$/, "")))
  ),
  sandboxPath: EnvVar.withDefault("PATH", EnvVar.string, "/usr/local/bin:/usr/bin:/bin")
})

const settings = Config.all({
  port: EnvVar.withDefault("PORT", EnvVar.integer(0, 65535), 3000),
  host: EnvVar.withDefault("HOST", EnvVar.string, "0.0.0.0"),
  databaseUrl: EnvVar.optional("DATABASE_URL", EnvVar.secretUrl),
  storage: EnvVar.withDefault("HANGAR_STORAGE", EnvVar.literal("postgres", "memory"), "postgres"),
  dataDir: EnvVar.withDefault("HANGAR_DATA_DIR", EnvVar.string, "./data"),
  logLevel: EnvVar.withDefault(
    "HANGAR_LOG_LEVEL",
    EnvVar.literal(...(Object.keys(logLevels) as Array<keyof typeof logLevels>)),
    "info"
  ).pipe(Config.map((name) => logLevels[name])),
  bootstrapApiKey: EnvVar.optional("HANGAR_BOOTSTRAP_API_KEY", EnvVar.secretString(20)),
  authRateLimit: EnvVar.withDefaultKeepEmpty("HANGAR_AUTH_RATE_LIMIT", EnvVar.rateWindows, [
    { limit: 10, seconds: 1 },
    { limit: 100, seconds: 60 }
  ]),
  secretKey: EnvVar.optional("HANGAR_SECRET_KEY", EnvVar.secretKey),
  maxAgentProfiles: EnvVar.withDefault("HANGAR_MAX_AGENT_PROFILES", EnvVar.integer(1), 50),
  maxLlmProfiles: EnvVar.withDefault("HANGAR_MAX_LLM_PROFILES", EnvVar.integer(1), 10),
  dailyConversationLimit: EnvVar.optional("HANGAR_DAILY_CONVERSATION_LIMIT", EnvVar.integer(0)),
  sandboxes,
  webClient
}).pipe(Config.validate({
  // Replicas share the database and must share the key; none may invent one.
  message: "HANGAR_SECRET_KEY: required with DATABASE_URL: 32 bytes in base64 (openssl rand -base64 32)",
  validation: (settings) =>
    !(settings.storage === "postgres" && Option.isSome(settings.databaseUrl) && Option.isNone(settings.secretKey))
}))

/** Loads and validates the configuration; `updated_at` is the moment of loading. */
export const load: Effect.Effect<AppConfigShape, import("effect").ConfigError.ConfigError> = Effect.gen(function*() {
  const { sandboxes, webClient, ...rest } = yield* settings
  const now = yield* DateTime.now
  return {
    ...rest,
    ...sandboxes,
    sandboxSpecs: Option.match(sandboxes.sandboxSpecs, {
      onNone: () => Arr.of(builtinSandboxSpec(now)),
      onSome: (specs) => Arr.map(specs, (spec) => SandboxSpec.make({ ...spec, created_at: now }))
    }),
    webClient: WebClientConfig.make({
      ...(presentOnly(webClient) as Omit<ConstructorParameters<typeof WebClientConfig>[0], "updated_at" | "kind">),
      updated_at: now,
      kind: "WebClientConfig"
    })
  }
})
