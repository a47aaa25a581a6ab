import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Ids sort in code-unit order (COLLATE "C") so keyset pages agree with every backend's order.
  yield* sql`
    CREATE TABLE sandboxes (
      id text COLLATE "C" PRIMARY KEY,
      created_by_user_id text NOT NULL,
      sandbox_spec_id text NOT NULL,
      status text NOT NULL CHECK (status IN ('STARTING', 'RUNNING', 'PAUSED', 'ERROR', 'MISSING')),
      desired_state text NOT NULL CHECK (desired_state IN ('RUNNING', 'PAUSED', 'DELETED')),
      version integer NOT NULL,
      instance_id text NOT NULL,
      session_key_hash text NOT NULL UNIQUE,
      session_key_sealed text,
      pid integer,
      process_start_time text,
      exposed_urls jsonb,
      exit_code integer,
      starting_since timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      deleted_at timestamptz
    )`
  yield* sql`CREATE INDEX sandboxes_by_user ON sandboxes (created_by_user_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX sandboxes_by_instance ON sandboxes (instance_id) WHERE deleted_at IS NULL`
})
