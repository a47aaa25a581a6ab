import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Titles and ids sort by code point (COLLATE "C"), as the memory store sorts them, so keyset
  // pages agree on every backend. One index per sort order, each serving both directions; the
  // title order puts a missing title after every title, as one row comparison can page through.
  yield* sql`
    CREATE TABLE conversations (
      id text COLLATE "C" PRIMARY KEY,
      created_by_user_id text NOT NULL,
      sandbox_id text NOT NULL,
      title text COLLATE "C",
      selected_repository text,
      selected_branch text,
      git_provider text,
      trigger text,
      llm_model text,
      agent_profile_id text,
      parent_conversation_id text,
      tags jsonb NOT NULL,
      public boolean NOT NULL,
      execution_status text,
      error jsonb,
      event_count integer NOT NULL CHECK (event_count >= 0),
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX conversations_by_created ON conversations (created_by_user_id, created_at, id)`
  yield* sql`CREATE INDEX conversations_by_updated ON conversations (created_by_user_id, updated_at, id)`
  yield* sql`
    CREATE INDEX conversations_by_title
    ON conversations (created_by_user_id, (title IS NULL), COALESCE(title, ''), id)`
  yield* sql`
    CREATE TABLE conversation_events (
      conversation_id text COLLATE "C" NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
      sequence integer NOT NULL CHECK (sequence > 0),
      kind text NOT NULL,
      event jsonb NOT NULL,
      received_at timestamptz NOT NULL,
      PRIMARY KEY (conversation_id, sequence)
    )`
  yield* sql`
    CREATE TABLE conversation_start_tasks (
      id text COLLATE "C" PRIMARY KEY,
      created_by_user_id text NOT NULL,
      status text NOT NULL
        CHECK (status IN ('WORKING', 'WAITING_FOR_SANDBOX', 'STARTING_CONVERSATION', 'READY', 'ERROR')),
      detail text,
      app_conversation_id text,
      sandbox_id text,
      started_sandbox boolean NOT NULL,
      agent_server_url text,
      instance_id text NOT NULL,
      quota_day text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE INDEX conversation_start_tasks_by_user
    ON conversation_start_tasks (created_by_user_id, created_at DESC, id DESC)`
  yield* sql`
    CREATE INDEX conversation_start_tasks_unfinished
    ON conversation_start_tasks (instance_id) WHERE status NOT IN ('READY', 'ERROR')`
  // One row per user and UTC day: reserving is one guarded upsert of it.
  yield* sql`
    CREATE TABLE daily_conversation_usage (
      user_id text NOT NULL,
      day text NOT NULL,
      used integer NOT NULL CHECK (used >= 0),
      PRIMARY KEY (user_id, day)
    )`
  yield* sql`
    CREATE TABLE daily_conversation_limits (
      scope text NOT NULL CHECK (scope IN ('User', 'Organization')),
      scope_id text NOT NULL,
      daily_limit integer NOT NULL CHECK (daily_limit >= -1),
      PRIMARY KEY (scope, scope_id)
    )`
})
