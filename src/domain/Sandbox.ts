import * as Schema from "effect/Schema"
import { UserId } from "./Identity.js"
import { Timestamp } from "./Timestamp.js"

export const SandboxId = Schema.String.pipe(Schema.brand("SandboxId"))
export type SandboxId = typeof SandboxId.Type

export const SandboxSpecId = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/),
  Schema.brand("SandboxSpecId")
)
export type SandboxSpecId = typeof SandboxSpecId.Type

/** What was last observed of the sandbox (SPEC §7). */
export const SandboxStatus = Schema.Literal("STARTING", "RUNNING", "PAUSED", "ERROR", "MISSING").annotations({
  identifier: "SandboxStatus"
})
export type SandboxStatus = typeof SandboxStatus.Type

/** What the sandbox should be; the instance running it moves the observed status towards it. */
export const DesiredState = Schema.Literal("RUNNING", "PAUSED", "DELETED")
export type DesiredState = typeof DesiredState.Type

export const ExposedUrlName = Schema.Literal("AGENT_SERVER", "VSCODE", "WORKER_1", "WORKER_2").annotations({
  identifier: "ExposedUrlName"
})
export type ExposedUrlName = typeof ExposedUrlName.Type

export const exposedUrlNames: ReadonlyArray<ExposedUrlName> = ExposedUrlName.literals

export class ExposedUrl extends Schema.Class<ExposedUrl>("ExposedUrl")({
  name: ExposedUrlName,
  url: Schema.String,
  port: Schema.Number.pipe(Schema.int())
}) {}

export class SandboxSpec extends Schema.Class<SandboxSpec>("SandboxSpec")({
  id: SandboxSpecId,
  command: Schema.Array(Schema.String).annotations({
    description: "argv; `{port}` (the agent server's port) and `{workspace}` are substituted"
  }),
  initial_env: Schema.Record({ key: Schema.String, value: Schema.String }),
  working_dir: Schema.NullOr(Schema.String).annotations({
    description: "Where the command runs, relative to the workspace unless absolute; null: the workspace"
  }),
  created_at: Timestamp
}) {}

/** The process a driver started, as the driver recognises it again: the start time guards against PID reuse. */
export const SandboxProcess = Schema.Struct({
  pid: Schema.Number.pipe(Schema.int()),
  start_time: Schema.String.annotations({ description: "Field 22 of /proc/<pid>/stat: clock ticks since boot" })
})
export type SandboxProcess = typeof SandboxProcess.Type

/**
 * A stored sandbox. The session key is kept twice: hashed (webhooks are authenticated by a hash
 * lookup) and sealed with the SecretBox (the owner is shown it while the sandbox runs, also after
 * a restart). Every change bumps `version`, and is applied only if `version` is unchanged.
 */
export class SandboxRecord extends Schema.Class<SandboxRecord>("SandboxRecord")({
  id: SandboxId,
  created_by_user_id: UserId,
  sandbox_spec_id: SandboxSpecId,
  status: SandboxStatus,
  desired_state: DesiredState,
  version: Schema.Number.pipe(Schema.int()),
  /** The Hangar instance whose driver runs the sandbox; only it observes and signals it. */
  instance_id: Schema.String,
  session_key_hash: Schema.String,
  session_key_sealed: Schema.NullOr(Schema.String),
  process: Schema.NullOr(SandboxProcess),
  exposed_urls: Schema.NullOr(Schema.Array(Schema.Struct(ExposedUrl.fields))),
  exit_code: Schema.NullOr(Schema.Number.pipe(Schema.int())),
  /** When the sandbox last entered STARTING: the start timeout counts from here. */
  starting_since: Schema.NullOr(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
  /** Set once the driver has removed it; the record stays so its owner's DELETE remains idempotent. */
  deleted_at: Schema.NullOr(Timestamp)
}) {}

/** The fields a compare-and-set may change. */
export type SandboxPatch = Partial<
  Pick<
    SandboxRecord,
    | "status"
    | "desired_state"
    | "session_key_sealed"
    | "process"
    | "exposed_urls"
    | "exit_code"
    | "starting_since"
    | "deleted_at"
  >
>

/** Counted against the concurrency limit: meant to run, and starting or running. */
export const isActive = (record: Pick<SandboxRecord, "status" | "desired_state">): boolean =>
  record.desired_state === "RUNNING" && (record.status === "STARTING" || record.status === "RUNNING")

export const SESSION_KEY_PREFIX = "hss_"
