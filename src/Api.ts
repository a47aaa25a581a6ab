import * as HttpApi from "@effect/platform/HttpApi"
import * as OpenApi from "@effect/platform/OpenApi"
import { AgentProfilesApi } from "./api/AgentProfilesApi.js"
import { ConfigApi } from "./api/ConfigApi.js"
import { ConversationsApi } from "./api/ConversationsApi.js"
import { HTTPValidationError } from "./api/Errors.js"
import { KeysApi } from "./api/KeysApi.js"
import { LlmProfilesApi } from "./api/LlmProfilesApi.js"
import { fastApiConventions } from "./api/OpenApiConventions.js"
import { OperationsApi } from "./api/OperationsApi.js"
import { OrganizationsApi } from "./api/OrganizationsApi.js"
import { QuotaApi } from "./api/QuotaApi.js"
import { SettingsApi } from "./api/SettingsApi.js"
import { FilesApi } from "./api/FilesApi.js"
import { SandboxesApi } from "./api/SandboxesApi.js"
import { SandboxSpecsApi } from "./api/SandboxSpecsApi.js"
import { WebhooksApi } from "./api/WebhooksApi.js"

/** The one definition of Hangar's HTTP API: handlers, client, OpenAPI and docs derive from it. */
export class HangarApi extends HttpApi.make("hangar")
  .add(ConfigApi)
  .add(KeysApi)
  .add(OrganizationsApi)
  .add(AgentProfilesApi)
  .add(LlmProfilesApi)
  .add(SettingsApi)
  .add(SandboxSpecsApi)
  .add(SandboxesApi)
  .add(FilesApi)
  .add(ConversationsApi)
  .add(QuotaApi)
  .add(WebhooksApi)
  .add(OperationsApi)
  .addError(HTTPValidationError)
  .annotateContext(OpenApi.annotations({
    title: "Hangar",
    version: "0.1.0",
    description: "Control plane for agent-driven software development: web-client configuration, " +
      "organisations and API keys, agent and LLM profiles, sandboxes and conversations.",
    transform: fastApiConventions
  }))
{}
