import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE agent_profiles (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      name text NOT NULL,
      agent_kind text NOT NULL CHECK (agent_kind IN ('openhands', 'acp')),
      revision integer NOT NULL,
      llm_profile_ref text,
      mcp_server_refs text[] NOT NULL,
      system_message_suffix text,
      acp_server text,
      acp_model text,
      acp_command text,
      acp_args text[] NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      UNIQUE (org_id, name),
      UNIQUE (org_id, id)
    )`
  // A member's pointer names a profile of the member's own organisation or nothing: activation
  // cannot point elsewhere even under races, and deleting a profile clears every pointer to it
  // in the same statement (SET NULL of one column of a composite key needs Postgres 15).
  yield* sql`
    ALTER TABLE memberships
      ADD CONSTRAINT memberships_active_agent_profile_fkey
      FOREIGN KEY (org_id, active_agent_profile_id) REFERENCES agent_profiles (org_id, id)
      ON DELETE SET NULL (active_agent_profile_id)`
  yield* sql`
    CREATE INDEX memberships_by_active_agent_profile ON memberships (org_id, active_agent_profile_id)
    WHERE active_agent_profile_id IS NOT NULL`
  yield* sql`
    CREATE TABLE llm_profiles (
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      name text NOT NULL,
      model text NOT NULL,
      base_url text,
      api_key_sealed text,
      api_version text,
      temperature double precision,
      max_output_tokens integer,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (user_id, name)
    )`
  yield* sql`
    CREATE TABLE user_settings (
      user_id text PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
      llm_model text,
      llm_base_url text,
      llm_api_key_sealed text,
      llm_api_version text,
      llm_temperature double precision,
      llm_max_output_tokens integer,
      active_llm_profile text,
      language text NOT NULL,
      confirmation_mode boolean NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT user_settings_active_llm_profile_fkey
        FOREIGN KEY (user_id, active_llm_profile) REFERENCES llm_profiles (user_id, name)
        ON DELETE SET NULL (active_llm_profile)
    )`
})
