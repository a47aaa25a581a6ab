import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { LlmProfile } from "../../domain/LlmProfile.js"
import { LlmProfileStore, type LlmProfileStoreShape } from "../LlmProfileStore.js"
import { sqlErrorsAreDefects, type WithSqlErrors } from "./Defects.js"
import { fromRow } from "./Rows.js"

const toProfile = fromRow(LlmProfile)

/** With the user's id, the advisory lock under which a create counts the user's profiles. */
const LLM_PROFILES_LOCK = 7_243_104

export const LlmProfileStorePg = Layer.effect(
  LlmProfileStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const store: WithSqlErrors<LlmProfileStoreShape> = {
      list: (userId) =>
        Effect.map(
          sql`SELECT * FROM llm_profiles WHERE user_id = ${userId} ORDER BY name COLLATE "C"`,
          (rows) => rows.map(toProfile)
        ),
      find: (userId, name) =>
        Effect.map(
          sql`SELECT * FROM llm_profiles WHERE user_id = ${userId} AND name = ${name}`,
          (rows) => Option.fromNullable(rows[0]).pipe(Option.map(toProfile))
        ),
      save: ({ apiKeySealed, fields: f, limit, name, userId }) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`SELECT pg_advisory_xact_lock(${LLM_PROFILES_LOCK}, hashtext(${userId}))`
          const key = Option.match(apiKeySealed, {
            onNone: () => sql``,
            onSome: (sealed) => sql`api_key_sealed = ${sealed},`
          })
          const replaced = yield* sql`
            UPDATE llm_profiles SET
              model = ${f.model}, base_url = ${f.base_url}, api_version = ${f.api_version},
              temperature = ${f.temperature}, max_output_tokens = ${f.max_output_tokens}, ${key}
              updated_at = now()
            WHERE user_id = ${userId} AND name = ${name}
            RETURNING *`
          if (replaced.length > 0) return { _tag: "Replaced" as const, profile: toProfile(replaced[0]) }
          const [{ count }] = yield* sql<{ count: number }>`
            SELECT count(*)::int AS count FROM llm_profiles WHERE user_id = ${userId}`
          if (count >= limit) return { _tag: "LimitReached" as const }
          const inserted = yield* sql`
            INSERT INTO llm_profiles (user_id, name, model, base_url, api_key_sealed, api_version, temperature,
              max_output_tokens, created_at, updated_at)
            VALUES (${userId}, ${name}, ${f.model}, ${f.base_url}, ${Option.getOrNull(apiKeySealed)}, ${f.api_version},
              ${f.temperature}, ${f.max_output_tokens}, now(), now())
            RETURNING *`
          return { _tag: "Created" as const, profile: toProfile(inserted[0]) }
        })),
      // The foreign key from user_settings clears an active_llm_profile naming it (ON DELETE SET NULL).
      remove: (userId, name) =>
        Effect.map(
          sql`DELETE FROM llm_profiles WHERE user_id = ${userId} AND name = ${name} RETURNING name`,
          (rows) => rows.length > 0
        )
    }
    return sqlErrorsAreDefects<LlmProfileStoreShape>(store)
  })
)
