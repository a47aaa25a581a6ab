import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { ApiKeyId, OrganizationId, UserId } from "../domain/Identity.js"
import { Timestamp } from "../domain/Timestamp.js"
import { optionalNullable, requestBody } from "./Bodies.js"
import { ForbiddenResponse, NotFoundResponse } from "./Errors.js"
import { Authentication } from "./Security.js"

export class CreateApiKeyRequest extends Schema.Class<CreateApiKeyRequest>("CreateApiKeyRequest")({
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100)),
  org_id: optionalNullable(OrganizationId).annotations({
    description: "Bind the key to this organisation (you must be a member). Default: the caller's organisation."
  }),
  unbound: Schema.optionalWith(Schema.Boolean.annotations({ default: false }), { default: () => false }).annotations({
    description: "Usable in every organisation of the user; not with org_id."
  }),
  not_before: optionalNullable(Timestamp).annotations({ description: "The key is refused before this instant." }),
  expires_at: optionalNullable(Timestamp).annotations({
    description: "The key is refused from this instant on; in the future, after not_before."
  })
}, requestBody("CreateApiKeyRequest")) {}

const keyFields = {
  id: ApiKeyId,
  name: Schema.String,
  key_prefix: Schema.String.annotations({ description: "The first 8 characters of the key, for display" }),
  user_id: UserId,
  org_id: Schema.NullOr(OrganizationId).annotations({ description: "null: explicitly unbound" }),
  created_at: Timestamp,
  not_before: Schema.NullOr(Timestamp),
  expires_at: Schema.NullOr(Timestamp)
}

export class ApiKeyCreated extends Schema.Class<ApiKeyCreated>("ApiKeyCreated")({
  ...keyFields,
  key: Schema.String.annotations({ description: "The key itself: shown this once, never again" })
}) {}

export class ApiKeyInfo extends Schema.Class<ApiKeyInfo>("ApiKeyInfo")({
  ...keyFields,
  last_used_at: Schema.NullOr(Timestamp).annotations({ description: "Updated at most every few seconds" })
}) {}

export class CurrentApiKey extends Schema.Class<CurrentApiKey>("CurrentApiKey")({
  id: ApiKeyId,
  name: Schema.String,
  org_id: Schema.NullOr(OrganizationId),
  user_id: UserId
}) {}

export class KeysApi extends HttpApiGroup.make("keys")
  .add(
    HttpApiEndpoint.post("createApiKey", "/api/keys")
      .setPayload(CreateApiKeyRequest)
      .addSuccess(ApiKeyCreated, { status: 201 })
      .addError(ForbiddenResponse)
      .annotateContext(OpenApi.annotations({
        summary: "Create API Key",
        description: "Creates a key for the caller. The response holds the key itself, shown this once: only its " +
          "SHA-256 hash is stored. A key bound to an organisation cannot create keys for another one, nor unbound keys."
      }))
  )
  .add(
    HttpApiEndpoint.get("listApiKeys", "/api/keys")
      .addSuccess(Schema.Array(ApiKeyInfo))
      .annotateContext(OpenApi.annotations({ summary: "List API Keys", description: "The caller's keys, oldest first; never the secret." }))
  )
  .add(
    HttpApiEndpoint.get("getCurrentApiKey", "/api/keys/current")
      .addSuccess(CurrentApiKey)
      .annotateContext(OpenApi.annotations({ summary: "Current API Key", description: "The key this request was made with." }))
  )
  .add(
    HttpApiEndpoint.del("deleteApiKey", "/api/keys/:key_id")
      .setPath(Schema.Struct({ key_id: ApiKeyId.pipe(Schema.maxLength(128)) }))
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFoundResponse)
      .annotateContext(OpenApi.annotations({
        summary: "Delete API Key",
        description: "Deletes one of the caller's keys; it is refused from the next request on. Another user's key is 404."
      }))
  )
  .middleware(Authentication)
  .annotateContext(OpenApi.annotations({ title: "API Keys", description: "Credentials for the API" }))
{}
