import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import type * as Redacted from "effect/Redacted"
import { hostname } from "node:os"
import { resolve } from "node:path"
import type { ExposedUrl, SandboxId, SandboxProcess, SandboxSpec } from "../domain/Sandbox.js"
import type { WorkspacePathProblem } from "./agent-server/Workspace.js"

export interface StartRequest {
  readonly id: SandboxId
  readonly spec: SandboxSpec
  readonly sessionKey: Redacted.Redacted<string>
  /** Where the agent server posts its webhooks (`HANGAR_PUBLIC_URL` + `/api/v1/webhooks`). */
  readonly webhookBaseUrl: string
}

export interface Started {
  /** The process to recognise the sandbox by later; null for drivers without local processes. */
  readonly process: SandboxProcess | null
  readonly exposedUrls: ReadonlyArray<ExposedUrl>
}

/** What the driver sees of a sandbox now. */
export type Observation =
  | { readonly _tag: "Running" }
  | { readonly _tag: "Stopped" }
  /** No such process (any more); the exit code when the driver saw it exit. */
  | { readonly _tag: "Gone"; readonly exitCode: number | null }

export class SandboxStartFailed extends Data.TaggedError("SandboxStartFailed")<{ readonly reason: string }> {}

/** The sandbox to act on: its id and, when the driver gave one, its process. */
export interface SandboxRef {
  readonly id: SandboxId
  readonly process: SandboxProcess | null
}

/**
 * Where sandboxes run (SPEC §7). The `memory` driver pretends, for tests; the `process` driver
 * runs each as a process group on this machine; a cluster driver would plug in here. Every
 * operation is idempotent, and acting on a sandbox that is gone is not an error.
 */
export interface SandboxDriverShape {
  /** Names this Hangar instance: records carry it, and each instance observes only its own sandboxes. */
  readonly instanceId: string
  readonly start: (request: StartRequest) => Effect.Effect<Started, SandboxStartFailed>
  readonly observe: (sandbox: SandboxRef) => Effect.Effect<Observation>
  /** Whether the agent server answers `GET /alive` with 200 now. */
  readonly probe: (exposedUrls: ReadonlyArray<ExposedUrl>) => Effect.Effect<boolean>
  readonly pause: (sandbox: SandboxRef) => Effect.Effect<void>
  readonly resume: (sandbox: SandboxRef) => Effect.Effect<void>
  /** Kills the sandbox's processes and keeps its directory (its log tells what went wrong). */
  readonly stop: (sandbox: SandboxRef) => Effect.Effect<void>
  /** Kills the sandbox's processes and removes everything it left. */
  readonly remove: (sandbox: SandboxRef) => Effect.Effect<void>
  /** Every sandbox this instance's driver finds traces of: directories, processes. */
  readonly leftovers: Effect.Effect<ReadonlyArray<SandboxId>>
  /** Creates a directory in the sandbox's workspace; refuses paths that lead outside it. */
  readonly createDirectory: (id: SandboxId, path: string) => Effect.Effect<string, WorkspacePathProblem>
  /** The workspace as the sandbox's own processes see it. */
  readonly workspacePath: (id: SandboxId) => string
}

export class SandboxDriver extends Context.Tag("hangar/SandboxDriver")<SandboxDriver, SandboxDriverShape>() {}

/**
 * A name stable across restarts of one instance and distinct between instances sharing a
 * database: the machine and the data directory (one process per data directory, SPEC §2).
 */
export const instanceIdentity = (dataDir: string) => `${hostname()}:${resolve(dataDir)}`
