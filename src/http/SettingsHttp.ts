import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { HangarApi } from "../Api.js"
import { MASKED_SECRET } from "../api/LlmProfilesApi.js"
import { CurrentPrincipal } from "../api/Security.js"
import { SettingsInfo } from "../api/SettingsApi.js"
import type { UserSettings } from "../domain/UserSettings.js"
import { Settings } from "../services/Settings.js"
import { bodyValueErrors } from "./ValidationDetail.js"

const info = ({ llm_api_key_sealed, updated_at: _, user_id: __, ...fields }: UserSettings) =>
  SettingsInfo.make({ ...fields, llm_api_key: llm_api_key_sealed === null ? null : MASKED_SECRET })

export const SettingsHttpLive = HttpApiBuilder.group(HangarApi, "settings", (handlers) =>
  Effect.gen(function*() {
    const settings = yield* Settings
    return handlers
      .handle("getSettings", () =>
        Effect.gen(function*() {
          const { userId } = yield* CurrentPrincipal
          return info(yield* settings.get(userId))
        }))
      .handle("updateSettings", ({ payload }) =>
        Effect.gen(function*() {
          const { userId } = yield* CurrentPrincipal
          // The mask a client read and sent back keeps the stored key.
          const { llm_api_key, ...changes } = payload
          const key = llm_api_key === undefined || llm_api_key === MASKED_SECRET ? {} : { llm_api_key }
          const updated = yield* settings.update(userId, { ...changes, ...key }).pipe(
            Effect.catchTag("InvalidFields", ({ problems }) => Effect.fail(bodyValueErrors(problems)))
          )
          return info(updated)
        }))
  }))
