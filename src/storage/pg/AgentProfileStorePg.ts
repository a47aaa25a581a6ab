import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { AgentProfile, type AgentProfileSettings } from "../../domain/AgentProfile.js"
import type { OrganizationId } from "../../domain/Identity.js"
import { AgentProfileStore, type AgentProfileStoreShape } from "../AgentProfileStore.js"
import { sqlErrorsAreDefects, violatesForeignKey, type WithSqlErrors } from "./Defects.js"
import { fromRow } from "./Rows.js"

const toProfile = fromRow(AgentProfile)

/** With the organisation's id, the advisory lock that serialises its profile writes. */
const AGENT_PROFILES_LOCK = 7_243_103

export const AgentProfileStorePg = Layer.effect(
  AgentProfileStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // Creates count before inserting and renames look before moving: each does so under this
    // lock, so parallel writers (on any replica) cannot both pass the check.
    const lockOrganization = (orgId: OrganizationId) =>
      sql`SELECT pg_advisory_xact_lock(${AGENT_PROFILES_LOCK}, hashtext(${orgId}))`

    const findByName = (orgId: OrganizationId, name: string) =>
      Effect.map(
        sql`SELECT * FROM agent_profiles WHERE org_id = ${orgId} AND name = ${name}`,
        (rows) => Option.fromNullable(rows[0]).pipe(Option.map(toProfile))
      )

    const replace = (orgId: OrganizationId, name: string, s: AgentProfileSettings) =>
      sql`
        UPDATE agent_profiles SET
          agent_kind = ${s.agent_kind},
          llm_profile_ref = ${s.llm_profile_ref},
          mcp_server_refs = ${s.mcp_server_refs}::text[],
          system_message_suffix = ${s.system_message_suffix},
          acp_server = ${s.acp_server},
          acp_model = ${s.acp_model},
          acp_command = ${s.acp_command},
          acp_args = ${s.acp_args}::text[],
          revision = revision + 1,
          updated_at = now()
        WHERE org_id = ${orgId} AND name = ${name}
        RETURNING *`

    const insert = (orgId: OrganizationId, name: string, s: AgentProfileSettings) =>
      sql`
        INSERT INTO agent_profiles (id, org_id, name, agent_kind, revision, llm_profile_ref, mcp_server_refs,
          system_message_suffix, acp_server, acp_model, acp_command, acp_args, created_at, updated_at)
        VALUES (${crypto.randomUUID()}, ${orgId}, ${name}, ${s.agent_kind}, 1, ${s.llm_profile_ref},
          ${s.mcp_server_refs}::text[], ${s.system_message_suffix}, ${s.acp_server}, ${s.acp_model},
          ${s.acp_command}, ${s.acp_args}::text[], now(), now())
        RETURNING *`

    const store: WithSqlErrors<AgentProfileStoreShape> = {
      list: (orgId) =>
        Effect.map(
          sql`SELECT * FROM agent_profiles WHERE org_id = ${orgId} ORDER BY name COLLATE "C"`,
          (rows) => rows.map(toProfile)
        ),
      findByName,
      save: ({ limit, name, orgId, settings }) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* lockOrganization(orgId)
          const replaced = yield* replace(orgId, name, settings)
          if (replaced.length > 0) return { _tag: "Replaced" as const, profile: toProfile(replaced[0]) }
          const [{ count }] = yield* sql<{ count: number }>`
            SELECT count(*)::int AS count FROM agent_profiles WHERE org_id = ${orgId}`
          if (count >= limit) return { _tag: "LimitReached" as const }
          const inserted = yield* insert(orgId, name, settings)
          return { _tag: "Created" as const, profile: toProfile(inserted[0]) }
        })),
      rename: (orgId, name, newName) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* lockOrganization(orgId)
          const existing = yield* findByName(orgId, name)
          if (Option.isNone(existing)) return { _tag: "NotFound" as const }
          if (newName === name) return { _tag: "Renamed" as const, profile: existing.value }
          if (Option.isSome(yield* findByName(orgId, newName))) return { _tag: "NameTaken" as const }
          const renamed = yield* sql`
            UPDATE agent_profiles SET name = ${newName}, revision = revision + 1, updated_at = now()
            WHERE id = ${existing.value.id} RETURNING *`
          return { _tag: "Renamed" as const, profile: toProfile(renamed[0]) }
        })),
      // The foreign key from memberships clears the pointers (ON DELETE SET NULL).
      remove: (orgId, name) =>
        Effect.map(
          sql`DELETE FROM agent_profiles WHERE org_id = ${orgId} AND name = ${name} RETURNING id`,
          (rows) => rows.length > 0
        ),
      activate: (orgId, userId, profileId) =>
        sql`
          UPDATE memberships SET active_agent_profile_id = ${profileId}
          WHERE org_id = ${orgId} AND user_id = ${userId}
            AND EXISTS (SELECT 1 FROM agent_profiles WHERE org_id = ${orgId} AND id = ${profileId})
          RETURNING 1`.pipe(
          Effect.map((rows) => rows.length > 0),
          // The profile was deleted between the check and the write: the foreign key refused it.
          Effect.catchIf(
            (error) => violatesForeignKey(error, "memberships_active_agent_profile_fkey"),
            () => Effect.succeed(false)
          )
        )
    }
    return sqlErrorsAreDefects<AgentProfileStoreShape>(store)
  })
)
