import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { readFileSync } from "node:fs"
import { renderOpenApi } from "../scripts/openapi.js"
import { get, testServer } from "./support/TestServer.js"

const committed = readFileSync(new URL("../schemas/openapi.json", import.meta.url), "utf8")

describe("the OpenAPI document", () => {
  it("committed in schemas/openapi.json is what the code generates (run `npm run openapi`)", () => {
    expect(committed).toBe(renderOpenApi())
  })

  it.effect("is served at /openapi.json, identical to the committed one", () =>
    Effect.gen(function*() {
      const response = yield* get("/openapi.json")
      expect(response.status).toBe(200)
      expect(yield* response.json).toEqual(JSON.parse(committed))
    }).pipe(Effect.provide(testServer())))

  it.effect("has an interactive reference page at /docs", () =>
    Effect.gen(function*() {
      const response = yield* get("/docs")
      expect(response.status).toBe(200)
      expect(response.headers["content-type"]).toContain("text/html")
      const page = yield* response.text
      expect(page).toContain("<title>Hangar</title>")
      expect(page).toContain("get_web_client_config_api_v1_web_client_config_get")
    }).pipe(Effect.provide(testServer())))

  it("has no Effect-internal 400 decode error anywhere", () => {
    expect(committed).not.toContain("HttpApiDecodeError")
    const spec = JSON.parse(committed)
    for (const item of Object.values<any>(spec.paths)) {
      for (const operation of Object.values<any>(item)) expect(operation.responses["400"]).toBeUndefined()
    }
  })
})
