import * as Schema from "effect/Schema"
import { component } from "../api/Bodies.js"
import { Timestamp } from "./Timestamp.js"

// The web-client configuration exactly as the seed document defines it (names marked † there
// are wire names too). Optional fields carry the seed defaults so the body always has them.

export const AppMode = Schema.Literal("oss", "saas").annotations({
  identifier: "AppMode",
  description: "Deployment flavour"
})
export type AppMode = typeof AppMode.Type

export const DeploymentMode = Schema.Literal("cloud", "self_hosted").annotations({
  identifier: "DeploymentMode"
})
export type DeploymentMode = typeof DeploymentMode.Type

export const ProviderType = Schema.Literal(
  "git_host_a",
  "git_host_b",
  "git_host_c",
  "git_host_c_data_center",
  "git_host_d",
  "git_host_e",
  "enterprise_sso"
).annotations({ identifier: "ProviderType" })
export type ProviderType = typeof ProviderType.Type

/** An optional field: absent on input means `value`, always present on output, documented default. */
const withDefault = <A, I>(schema: Schema.Schema<A, I>, value: A) =>
  Schema.optionalWith(schema.annotations({ default: value }), { default: () => value })

const optionalNull = <A, I>(schema: Schema.Schema<A, I>) => withDefault(Schema.NullOr(schema), null)

const flag = (value: boolean) => withDefault(Schema.Boolean, value)


export class ACPModelOption extends Schema.Class<ACPModelOption>("ACPModelOption")({
  id: Schema.String,
  label: Schema.String
}) {}

export class ACPProviderConfig extends Schema.Class<ACPProviderConfig>("ACPProviderConfig")({
  key: Schema.String,
  display_name: Schema.String,
  default_command: Schema.Array(Schema.String),
  default_model: optionalNull(Schema.String),
  available_models: withDefault(Schema.Array(ACPModelOption), []),
  api_key_env_var: optionalNull(Schema.String),
  base_url_env_var: optionalNull(Schema.String)
}, component("ACPProviderConfig")) {}

export class WebClientFeatureFlags extends Schema.Class<WebClientFeatureFlags>("WebClientFeatureFlags")({
  enable_billing: flag(false),
  hide_llm_settings: flag(false),
  enable_tracker: flag(false),
  enable_tracker_dc: flag(false),
  enable_tracker_alt: flag(false),
  hide_users_page: flag(false),
  hide_billing_page: flag(false),
  hide_integrations_page: flag(false),
  hide_personal_workspaces: flag(false),
  allow_user_llm_configuration: flag(true),
  enable_acp: flag(true),
  deployment_mode: optionalNull(DeploymentMode),
  enable_onboarding: flag(false),
  enable_automations: flag(true),
  enable_canvas_banner: flag(false)
}, component("WebClientFeatureFlags")) {}

/** The boolean feature flags, in declaration order: each is settable as `HANGAR_FEATURE_<FLAG>`. */
export const featureFlagNames = Object.keys(WebClientFeatureFlags.fields).filter(
  (name): name is Exclude<keyof typeof WebClientFeatureFlags.fields, "deployment_mode"> =>
    name !== "deployment_mode"
)

export class WebClientConfig extends Schema.Class<WebClientConfig>("WebClientConfig")({
  app_mode: AppMode,
  analytics_client_key: Schema.NullOr(Schema.String).annotations({
    description: "Public client key of the analytics service"
  }),
  feature_flags: WebClientFeatureFlags,
  providers_configured: Schema.Array(ProviderType),
  maintenance_start_time: Schema.NullOr(Timestamp),
  auth_url: Schema.NullOr(Schema.String).annotations({ description: "Address of the authentication service" }),
  captcha_site_key: Schema.NullOr(Schema.String),
  faulty_models: Schema.Array(Schema.String),
  error_message: Schema.NullOr(Schema.String),
  updated_at: Timestamp.annotations({ description: "When the running configuration was loaded" }),
  vcs_app_slug: Schema.NullOr(Schema.String).annotations({
    description: "Slug of the installed app of a code host"
  }),
  vcs_alt_enabled: flag(false),
  provider_default_hosts: withDefault(Schema.Record({ key: Schema.String, value: Schema.String }), {}),
  chat_enabled: flag(false),
  email_enabled: flag(false),
  email_change_enabled: flag(true),
  acp_providers: withDefault(Schema.Array(ACPProviderConfig), []),
  tracker_dc_oauth_host: optionalNull(Schema.String),
  tracker_dc_service_account_managed: flag(false),
  tracker_dc_service_account_email: optionalNull(Schema.String),
  tracker_dc_service_account_config_error: optionalNull(Schema.String),
  kind: Schema.Literal("WebClientConfig")
}, component("WebClientConfig")) {}
