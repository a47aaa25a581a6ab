import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { defaultSettings, UserSettings } from "../../domain/UserSettings.js"
import { SettingsStore, type SettingsStoreShape } from "../SettingsStore.js"
import { sqlErrorsAreDefects, violatesForeignKey, type WithSqlErrors } from "./Defects.js"
import { fromRow } from "./Rows.js"

const toSettings = fromRow(UserSettings)

export const SettingsStorePg = Layer.effect(
  SettingsStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const store: WithSqlErrors<SettingsStoreShape> = {
      find: (userId) =>
        Effect.map(
          sql`SELECT * FROM user_settings WHERE user_id = ${userId}`,
          (rows) => Option.fromNullable(rows[0]).pipe(Option.map(toSettings))
        ),
      // The defaults are inserted first, so that concurrent first updates of different fields
      // each update the one row and neither overwrites the other's field with a default.
      update: (userId, changes) => {
        const given = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined))
        const assignments = Object.keys(given).length > 0 ? sql`${sql.update(given)},` : sql``
        return sql.withTransaction(Effect.gen(function*() {
          yield* sql`
            INSERT INTO user_settings ${sql.insert({ user_id: userId, ...defaultSettings, updated_at: new Date() })}
            ON CONFLICT (user_id) DO NOTHING`
          const rows = yield* sql`
            UPDATE user_settings SET ${assignments} updated_at = now() WHERE user_id = ${userId} RETURNING *`
          return Option.some(toSettings(rows[0]))
        })).pipe(
          // `active_llm_profile` names no profile of the user: the transaction wrote nothing.
          Effect.catchIf(
            (error) => violatesForeignKey(error, "user_settings_active_llm_profile_fkey"),
            () => Effect.succeed(Option.none())
          )
        )
      }
    }
    return sqlErrorsAreDefects<SettingsStoreShape>(store)
  })
)
