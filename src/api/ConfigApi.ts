import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { WebClientConfig } from "../domain/WebClientConfig.js"

export class ConfigApi extends HttpApiGroup.make("config")
  .add(
    HttpApiEndpoint.get("getWebClientConfig", "/api/v1/web-client/config")
      .addSuccess(WebClientConfig)
      .annotateContext(OpenApi.annotations({
        summary: "Get Web Client Config",
        description: "Settings the web client needs before anyone signs in; they do not depend on the user, so no " +
          "credential is required (one sent is ignored). The response carries an `ETag`: send it back in " +
          "`If-None-Match` to get `304 Not Modified` while the configuration is unchanged."
      }))
  )
  .annotateContext(OpenApi.annotations({
    title: "Config",
    description: "Public configuration for web clients"
  }))
{}
