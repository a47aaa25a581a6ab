import * as OpenApi from "@effect/platform/OpenApi"
import { writeFileSync } from "node:fs"
import { HangarApi } from "../src/Api.js"

/** Serialises the OpenAPI document exactly as committed in `schemas/openapi.json`. */
export const renderOpenApi = (): string => JSON.stringify(OpenApi.fromApi(HangarApi), null, 2) + "\n"

if (process.argv[2] === "--write") {
  writeFileSync(new URL("../schemas/openapi.json", import.meta.url), renderOpenApi())
}
