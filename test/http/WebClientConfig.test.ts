import * as OpenApi from "@effect/platform/OpenApi"
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { HangarApi } from "../../src/Api.js"
import { client, get, json, testServer } from "../support/TestServer.js"

// The seed's WebClientConfig and WebClientFeatureFlags tables, transcribed: the contract the body
// and the OpenAPI document are checked against, field by field.
type Kind = "string" | "boolean" | "date-time" | "object" | "array" | "enum" | "const"
interface SeedField {
  readonly kind: Kind
  readonly required: boolean
  readonly nullable: boolean
  readonly fallback?: unknown
}
const field = (kind: Kind, required: boolean, nullable: boolean, fallback?: unknown): SeedField =>
  fallback === undefined ? { kind, required, nullable } : { kind, required, nullable, fallback }

const seedConfig: Record<string, SeedField> = {
  app_mode: field("enum", true, false),
  analytics_client_key: field("string", true, true),
  feature_flags: field("object", true, false),
  providers_configured: field("array", true, false),
  maintenance_start_time: field("date-time", true, true),
  auth_url: field("string", true, true),
  captcha_site_key: field("string", true, true),
  faulty_models: field("array", true, false),
  error_message: field("string", true, true),
  updated_at: field("date-time", true, false),
  vcs_app_slug: field("string", true, true),
  vcs_alt_enabled: field("boolean", false, false, false),
  provider_default_hosts: field("object", false, false),
  chat_enabled: field("boolean", false, false, false),
  email_enabled: field("boolean", false, false, false),
  email_change_enabled: field("boolean", false, false, true),
  acp_providers: field("array", false, false),
  tracker_dc_oauth_host: field("string", false, true),
  tracker_dc_service_account_managed: field("boolean", false, false, false),
  tracker_dc_service_account_email: field("string", false, true),
  tracker_dc_service_account_config_error: field("string", false, true),
  kind: field("const", true, false)
}

const seedFlags: Record<string, boolean | null> = {
  enable_billing: false,
  hide_llm_settings: false,
  enable_tracker: false,
  enable_tracker_dc: false,
  enable_tracker_alt: false,
  hide_users_page: false,
  hide_billing_page: false,
  hide_integrations_page: false,
  hide_personal_workspaces: false,
  allow_user_llm_configuration: true,
  enable_acp: true,
  deployment_mode: null,
  enable_onboarding: false,
  enable_automations: true,
  enable_canvas_banner: false
}

const seedEnums = {
  AppMode: ["oss", "saas"],
  DeploymentMode: ["cloud", "self_hosted"],
  ProviderType: [
    "git_host_a",
    "git_host_b",
    "git_host_c",
    "git_host_c_data_center",
    "git_host_d",
    "git_host_e",
    "enterprise_sso"
  ]
}

const rfc3339Utc = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/

const checkKind = (name: string, spec: SeedField, value: unknown) => {
  if (value === null) {
    expect(spec.nullable, `${name} is null but the seed says it is not nullable`).toBe(true)
    return
  }
  switch (spec.kind) {
    case "string":
      return expect(typeof value, name).toBe("string")
    case "boolean":
      return expect(typeof value, name).toBe("boolean")
    case "date-time":
      return expect(value, name).toMatch(rfc3339Utc)
    case "object":
      return expect(value !== null && typeof value === "object" && !Array.isArray(value), name).toBe(true)
    case "array":
      return expect(Array.isArray(value), name).toBe(true)
    case "enum":
      return expect(seedEnums.AppMode, name).toContain(value)
    case "const":
      return expect(value, name).toBe("WebClientConfig")
  }
}

const path = "/api/v1/web-client/config"

describe("GET /api/v1/web-client/config", () => {
  it.effect("serves every seed field under its seed name, with the seed defaults", () =>
    Effect.gen(function*() {
      const { body, status } = yield* Effect.flatMap(get(path), json)
      expect(status).toBe(200)
      expect(Object.keys(body).sort()).toEqual(Object.keys(seedConfig).sort())
      for (const [name, spec] of Object.entries(seedConfig)) {
        checkKind(name, spec, body[name])
        if (spec.fallback !== undefined) expect(body[name], name).toBe(spec.fallback)
      }
      // Required and nullable, nothing configured: null.
      for (const name of ["analytics_client_key", "maintenance_start_time", "auth_url", "captcha_site_key", "error_message", "vcs_app_slug"]) {
        expect(body[name], name).toBeNull()
      }
      // Optional, no seed default: their empty value.
      expect(body.provider_default_hosts).toEqual({})
      expect(body.acp_providers).toEqual([])
      expect(body.tracker_dc_oauth_host).toBeNull()
      expect(body.tracker_dc_service_account_email).toBeNull()
      expect(body.tracker_dc_service_account_config_error).toBeNull()
      expect(body.app_mode).toBe("oss")
      expect(body.providers_configured).toEqual([])
      expect(body.faulty_models).toEqual([])
      expect(body.kind).toBe("WebClientConfig")
      expect(body.feature_flags).toEqual(seedFlags)
    }).pipe(Effect.provide(testServer())))

  it.effect("takes every value from the HANGAR_* variables", () =>
    Effect.gen(function*() {
      const { body } = yield* Effect.flatMap(get(path), json)
      expect(body).toMatchObject({
        app_mode: "saas",
        analytics_client_key: "phc_public",
        providers_configured: ["git_host_a", "git_host_c_data_center", "enterprise_sso"],
        maintenance_start_time: "2026-12-01T22:00:00.000Z",
        auth_url: "https://auth.example.com",
        captcha_site_key: "captcha-site",
        faulty_models: ["model-a", "model-b"],
        error_message: "Degraded service",
        vcs_app_slug: "hangar-app",
        vcs_alt_enabled: true,
        provider_default_hosts: { git_host_a: "git.example.com" },
        chat_enabled: true,
        email_enabled: true,
        email_change_enabled: false,
        acp_providers: [{
          key: "claude",
          display_name: "Claude Code",
          default_command: ["claude-code-acp"],
          default_model: null,
          available_models: [{ id: "m1", label: "Model 1" }],
          api_key_env_var: "CLAUDE_KEY",
          base_url_env_var: null
        }],
        tracker_dc_oauth_host: "tracker.example.com",
        tracker_dc_service_account_managed: true,
        tracker_dc_service_account_email: "svc@example.com",
        tracker_dc_service_account_config_error: "bad key",
        kind: "WebClientConfig"
      })
      expect(body.feature_flags).toEqual({
        ...seedFlags,
        enable_billing: true,
        enable_acp: false,
        hide_users_page: true,
        deployment_mode: "self_hosted"
      })
    }).pipe(Effect.provide(testServer({
      HANGAR_APP_MODE: "saas",
      HANGAR_DEPLOYMENT_MODE: "self_hosted",
      HANGAR_ANALYTICS_CLIENT_KEY: "phc_public",
      HANGAR_PROVIDERS_CONFIGURED: "git_host_a, git_host_c_data_center,enterprise_sso",
      HANGAR_MAINTENANCE_START_TIME: "2026-12-01T23:00:00+01:00",
      HANGAR_AUTH_URL: "https://auth.example.com",
      HANGAR_CAPTCHA_SITE_KEY: "captcha-site",
      HANGAR_FAULTY_MODELS: "model-a,model-b",
      HANGAR_ERROR_MESSAGE: "Degraded service",
      HANGAR_VCS_APP_SLUG: "hangar-app",
      HANGAR_VCS_ALT_ENABLED: "true",
      HANGAR_PROVIDER_DEFAULT_HOSTS: "{\"git_host_a\": \"git.example.com\"}",
      HANGAR_CHAT_ENABLED: "yes",
      HANGAR_EMAIL_ENABLED: "1",
      HANGAR_EMAIL_CHANGE_ENABLED: "false",
      HANGAR_ACP_PROVIDERS: JSON.stringify([{
        key: "claude",
        display_name: "Claude Code",
        default_command: ["claude-code-acp"],
        available_models: [{ id: "m1", label: "Model 1" }],
        api_key_env_var: "CLAUDE_KEY"
      }]),
      HANGAR_TRACKER_DC_OAUTH_HOST: "tracker.example.com",
      HANGAR_TRACKER_DC_SERVICE_ACCOUNT_MANAGED: "true",
      HANGAR_TRACKER_DC_SERVICE_ACCOUNT_EMAIL: "svc@example.com",
      HANGAR_TRACKER_DC_SERVICE_ACCOUNT_CONFIG_ERROR: "bad key",
      HANGAR_FEATURE_ENABLE_BILLING: "true",
      HANGAR_FEATURE_ENABLE_ACP: "false",
      HANGAR_FEATURE_HIDE_USERS_PAGE: "on"
    }))))

  it.effect("every feature flag is settable through HANGAR_FEATURE_<FLAG>", () =>
    Effect.gen(function*() {
      const { body } = yield* Effect.flatMap(get(path), json)
      for (const [flag, fallback] of Object.entries(seedFlags)) {
        if (flag !== "deployment_mode") expect(body.feature_flags[flag], flag).toBe(!fallback)
      }
    }).pipe(Effect.provide(testServer(Object.fromEntries(
      Object.entries(seedFlags)
        .filter(([flag]) => flag !== "deployment_mode")
        .map(([flag, fallback]) => [`HANGAR_FEATURE_${flag.toUpperCase()}`, String(!fallback)])
    )))))

  it.effect("needs no credential and ignores a garbage one", () =>
    Effect.gen(function*() {
      for (
        const headers of [
          { "x-access-token": "garbage" },
          { authorization: "Bearer nope" },
          { cookie: "api_key=garbage" }
        ]
      ) {
        const response = yield* get(path, headers)
        expect(response.status).toBe(200)
      }
    }).pipe(Effect.provide(testServer({ HANGAR_APP_MODE: "saas" }))))

  it.effect("answers If-None-Match with its ETag by 304, anything else by 200", () =>
    Effect.gen(function*() {
      const first = yield* get(path)
      const etag = first.headers.etag
      expect(etag).toMatch(/^"[^"]+"$/)
      const again = yield* get(path, { "if-none-match": etag })
      expect(again.status).toBe(304)
      expect(again.headers.etag).toBe(etag)
      expect(yield* again.text).toBe("")
      expect((yield* get(path, { "if-none-match": `"other", W/${etag}` })).status).toBe(304)
      expect((yield* get(path, { "if-none-match": "*" })).status).toBe(304)
      expect((yield* get(path, { "if-none-match": "\"stale\"" })).status).toBe(200)
    }).pipe(Effect.provide(testServer())))

  it.effect("a different configuration has a different ETag", () =>
    Effect.gen(function*() {
      const a = (yield* get(path).pipe(Effect.provide(testServer()))).headers.etag
      const b = (yield* get(path).pipe(Effect.provide(testServer({ HANGAR_ERROR_MESSAGE: "x" })))).headers.etag
      expect(a).not.toBe(b)
    }))

  // Live clock: the load time is a real instant, bracketed by readings taken around the load.
  it.live("updated_at is when the running configuration was loaded", () =>
    Effect.gen(function*() {
      const before = yield* DateTime.now
      const { after, body } = yield* Effect.gen(function*() {
        const after = yield* DateTime.now
        const { body } = yield* Effect.flatMap(get(path), json)
        yield* Effect.sleep("20 millis")
        // Later requests report the same load time.
        const second = yield* Effect.flatMap(get(path), json)
        expect(second.body.updated_at).toBe(body.updated_at)
        return { body, after }
      }).pipe(Effect.provide(testServer()))
      const loaded = Date.parse(body.updated_at)
      expect(before.epochMillis).toBeGreaterThan(Date.parse("2020-01-01T00:00:00Z"))
      expect(loaded).toBeGreaterThanOrEqual(before.epochMillis)
      expect(loaded).toBeLessThanOrEqual(after.epochMillis)
    }))

  it.effect("the typed client decodes the body as a WebClientConfig", () =>
    Effect.gen(function*() {
      const api = yield* client
      const config = yield* api.config.getWebClientConfig()
      expect(config.kind).toBe("WebClientConfig")
      expect(config.feature_flags.enable_acp).toBe(true)
      expect(DateTime.isDateTime(config.updated_at)).toBe(true)
    }).pipe(Effect.provide(testServer())))
})

describe("the OpenAPI document of the config endpoint", () => {
  const spec = OpenApi.fromApi(HangarApi) as any
  const schemas = spec.components.schemas

  it("has the seed's tag and operation id, no parameters and no body", () => {
    const operation = spec.paths[path].get
    expect(operation.tags).toEqual(["Config"])
    expect(operation.operationId).toBe("get_web_client_config_api_v1_web_client_config_get")
    expect(operation.parameters).toEqual([])
    expect(operation.requestBody).toBeUndefined()
    expect(operation.responses["200"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/WebClientConfig"
    })
  })

  it("declares WebClientConfig as the seed does: names, types, required, nullability, defaults", () => {
    const component = schemas.WebClientConfig
    expect(Object.keys(component.properties).sort()).toEqual(Object.keys(seedConfig).sort())
    expect([...component.required].sort()).toEqual(
      Object.entries(seedConfig).filter(([, spec]) => spec.required).map(([name]) => name).sort()
    )
    for (const [name, spec] of Object.entries(seedConfig)) {
      const property = component.properties[name]
      const alternatives: Array<any> = property.anyOf ?? [property]
      expect(alternatives.some((alternative) => alternative.type === "null"), `${name} nullable`).toBe(spec.nullable)
      if (spec.fallback !== undefined) expect(property.default, `${name} default`).toBe(spec.fallback)
      const types = alternatives.filter((alternative) => alternative.type !== "null")
      expect(types.length, name).toBe(1)
      const type = types[0]
      switch (spec.kind) {
        case "date-time":
          expect(type, name).toEqual({ type: "string", format: "date-time" })
          break
        case "enum":
          expect(type.$ref, name).toBe("#/components/schemas/AppMode")
          break
        case "const":
          expect(type.enum, name).toEqual(["WebClientConfig"])
          break
        case "object":
          expect(type.$ref ?? type.type, name).toMatch(/object|WebClientFeatureFlags/)
          break
        default:
          expect(type.type, name).toBe(spec.kind)
      }
    }
    expect(component.properties.providers_configured.items).toEqual({ $ref: "#/components/schemas/ProviderType" })
    expect(component.properties.provider_default_hosts.additionalProperties).toEqual({ type: "string" })
  })

  it("declares the flags with their seed defaults, all optional", () => {
    const flags = schemas.WebClientFeatureFlags
    expect(flags.required).toEqual([])
    expect(Object.keys(flags.properties).sort()).toEqual(Object.keys(seedFlags).sort())
    for (const [flag, fallback] of Object.entries(seedFlags)) {
      if (flag === "deployment_mode") continue
      expect(flags.properties[flag], flag).toEqual({ type: "boolean", default: fallback })
    }
    expect(flags.properties.deployment_mode.anyOf).toEqual([
      { $ref: "#/components/schemas/DeploymentMode" },
      { type: "null" }
    ])
  })

  it("lists exactly the seed's enum values", () => {
    for (const [name, values] of Object.entries(seedEnums)) {
      expect(schemas[name].enum, name).toEqual(values)
    }
  })

  it("declares ACPProviderConfig and ACPModelOption as the seed does", () => {
    expect([...schemas.ACPProviderConfig.required].sort()).toEqual(["default_command", "display_name", "key"])
    expect(Object.keys(schemas.ACPProviderConfig.properties).sort()).toEqual(
      ["api_key_env_var", "available_models", "base_url_env_var", "default_command", "default_model", "display_name", "key"]
    )
    expect(schemas.ACPModelOption.required).toEqual(["id", "label"])
  })
})
