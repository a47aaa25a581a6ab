import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE organizations (
      id text PRIMARY KEY,
      name text NOT NULL,
      created_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE users (
      id text PRIMARY KEY,
      name text NOT NULL,
      email text UNIQUE,
      created_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE memberships (
      org_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
      active_agent_profile_id text,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (org_id, user_id)
    )`
  yield* sql`CREATE INDEX memberships_by_user ON memberships (user_id, created_at)`
  yield* sql`
    CREATE TABLE api_keys (
      id text PRIMARY KEY,
      name text NOT NULL,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      org_id text REFERENCES organizations (id) ON DELETE CASCADE,
      key_hash text NOT NULL UNIQUE,
      key_prefix text NOT NULL,
      created_at timestamptz NOT NULL,
      last_used_at timestamptz,
      not_before timestamptz,
      expires_at timestamptz
    )`
  yield* sql`CREATE INDEX api_keys_by_user ON api_keys (user_id, created_at)`
  yield* sql`
    CREATE TABLE auth_rate_counters (
      bucket text NOT NULL,
      window_seconds integer NOT NULL,
      window_start timestamptz NOT NULL,
      count integer NOT NULL,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (bucket, window_seconds, window_start)
    )`
  yield* sql`CREATE INDEX auth_rate_counters_by_expiry ON auth_rate_counters (expires_at)`
})
