import * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberMap from "effect/FiberMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { Conflict, NotFound, SandboxLimitDetail, SandboxLimitReached } from "../api/Errors.js"
import { pageOf } from "../api/Pagination.js"
import { AppConfig } from "../AppConfig.js"
import type { UserId } from "../domain/Identity.js"
import {
  type SandboxId,
  type SandboxPatch,
  SandboxRecord,
  type SandboxSpec,
  type SandboxSpecId,
  type SandboxStatus,
  SESSION_KEY_PREFIX
} from "../domain/Sandbox.js"
import { generateSecret, hashSecret } from "../domain/Secrets.js"
import { type Observation, SandboxDriver, type SandboxRef } from "../sandbox/SandboxDriver.js"
import { type Activation, type SandboxSortKey, SandboxStore } from "../storage/SandboxStore.js"
import { PublicUrl } from "./PublicUrl.js"
import { SecretBox } from "./SecretBox.js"

/** A workspace path that is absolute or leads outside the workspace. */
export class PathOutsideWorkspace extends Data.TaggedError("PathOutsideWorkspace")<{ readonly reason: string }> {}

export interface SandboxPage {
  readonly items: ReadonlyArray<SandboxRecord>
  readonly next: Option.Option<SandboxSortKey>
}

/**
 * The sandbox business rules (SPEC §7). A sandbox belongs to the user who started it and is
 * invisible to everyone else (404, never 403). Requests set the desired state; the instance whose
 * driver runs the sandbox moves it there and records what it observes, at once when the request
 * reaches that instance, else at its next reconciliation.
 */
export interface SandboxesShape {
  readonly specs: Arr.NonEmptyReadonlyArray<SandboxSpec>
  readonly start: (
    userId: UserId,
    specId: Option.Option<SandboxSpecId>
  ) => Effect.Effect<SandboxRecord, NotFound | SandboxLimitReached>
  readonly search: (
    userId: UserId,
    query: { readonly status: Option.Option<SandboxStatus>; readonly after: Option.Option<SandboxSortKey>; readonly limit: number }
  ) => Effect.Effect<SandboxPage>
  /** In request order; none for ids that are unknown or not the caller's. */
  readonly getMany: (userId: UserId, ids: ReadonlyArray<SandboxId>) => Effect.Effect<ReadonlyArray<Option.Option<SandboxRecord>>>
  readonly pause: (userId: UserId, id: SandboxId) => Effect.Effect<void, NotFound | Conflict>
  readonly resume: (userId: UserId, id: SandboxId) => Effect.Effect<void, NotFound | Conflict | SandboxLimitReached>
  readonly remove: (userId: UserId, id: SandboxId) => Effect.Effect<void, NotFound>
  /** The session key, for its owner, while the sandbox is RUNNING. */
  readonly sessionKeyOf: (record: SandboxRecord) => string | null
  readonly vscodeUrl: (userId: UserId, id: SandboxId, baseUrl: Option.Option<URL>) => Effect.Effect<string, NotFound>
  readonly createDirectory: (
    userId: UserId,
    id: SandboxId,
    path: string
  ) => Effect.Effect<string, NotFound | Conflict | PathOutsideWorkspace>
  /** Matches every record of this instance with what its driver finds; run at start and every 30 s. */
  readonly reconcile: Effect.Effect<void>
}

export class Sandboxes extends Context.Tag("hangar/Sandboxes")<Sandboxes, SandboxesShape>() {}

const RECONCILE_INTERVAL = Duration.seconds(30)
const PROBE_INTERVAL = Duration.millis(200)
/** Compare-and-set attempts before a transition gives up (only under pathological contention). */
const MAX_ATTEMPTS = 20

const isGone = (status: SandboxStatus) => status === "ERROR" || status === "MISSING"

/** A process that is gone: ERROR when it is known to have exited non-zero, else MISSING. */
const goneStatus = (observation: Extract<Observation, { _tag: "Gone" }>): SandboxPatch => ({
  status: observation.exitCode !== null && observation.exitCode !== 0 ? "ERROR" : "MISSING",
  exit_code: observation.exitCode
})

const refOf = (record: SandboxRecord): SandboxRef => ({ id: record.id, process: record.process })

const notFound = new NotFound({ detail: "Sandbox not found" })

export const SandboxesLive = Layer.scoped(
  Sandboxes,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const store = yield* SandboxStore
    const driver = yield* SandboxDriver
    const box = yield* SecretBox
    const { url: publicUrl } = yield* PublicUrl
    const watchers = yield* FiberMap.make<SandboxId>()
    const limit = { max: config.maxConcurrentSandboxes, policy: config.sandboxLimitPolicy }
    const webhookBaseUrl = `${publicUrl}/api/v1/webhooks`

    const limitReached = (current: number) =>
      new SandboxLimitReached({
        detail: SandboxLimitDetail.make({
          code: "sandbox_limit_reached",
          message: `At most ${limit.max} sandboxes may be starting or running at once; pause or delete one first.`,
          limit: limit.max,
          current
        })
      })

    /**
     * Applies `change` to the freshest record until its compare-and-set wins. `change` returns
     * nothing when there is nothing (more) to do; the result is then the record as it is.
     */
    const transition = (id: SandboxId, change: (record: SandboxRecord) => SandboxPatch | undefined) =>
      Effect.gen(function*() {
        for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
          const current = yield* store.find(id)
          if (Option.isNone(current)) return current
          const patch = change(current.value)
          if (patch === undefined) return current
          const updated = yield* store.update(id, current.value.version, patch)
          if (Option.isSome(updated)) return updated
        }
        return yield* Effect.dieMessage(`sandbox ${id}: gave up a transition after ${MAX_ATTEMPTS} lost compare-and-sets`)
      })

    /** Retries an activation whose compare-and-set was lost to a concurrent change. */
    const activateUntilDecided = (
      attempt: Effect.Effect<Activation>
    ): Effect.Effect<Exclude<Activation, { readonly _tag: "Conflict" }>> =>
      Effect.gen(function*() {
        for (let n = 0; n < MAX_ATTEMPTS; n++) {
          const result = yield* attempt
          if (result._tag !== "Conflict") return result
        }
        return yield* Effect.dieMessage(`gave up activating a sandbox after ${MAX_ATTEMPTS} lost compare-and-sets`)
      })

    const now = DateTime.now

    /** A sandbox that is still starting: wait for its agent server, within the start timeout. */
    const watchStart = (id: SandboxId): Effect.Effect<void> =>
      Effect.gen(function*() {
        while (true) {
          const found = yield* store.find(id)
          if (Option.isNone(found)) return
          const record = found.value
          if (record.status !== "STARTING" || record.desired_state !== "RUNNING") return
          const stillStarting = (r: SandboxRecord) => r.status === "STARTING" && r.desired_state === "RUNNING"
          const observation = yield* driver.observe(refOf(record))
          if (observation._tag === "Gone") {
            yield* transition(id, (r) => (stillStarting(r) ? goneStatus(observation) : undefined))
            return yield* Effect.logWarning("sandbox exited while starting").pipe(
              Effect.annotateLogs({ sandbox_id: id, exit_code: observation.exitCode })
            )
          }
          if (observation._tag === "Running" && (yield* driver.probe(record.exposed_urls ?? []))) {
            yield* transition(id, (r) => (stillStarting(r) && r.version === record.version ? { status: "RUNNING" } : undefined))
            continue
          }
          if (yield* timedOut(record)) {
            yield* driver.stop(refOf(record))
            yield* transition(id, (r) => (stillStarting(r) ? { status: "ERROR" } : undefined))
            return yield* Effect.logWarning("sandbox did not answer within the start timeout").pipe(
              Effect.annotateLogs({ sandbox_id: id })
            )
          }
          yield* Effect.sleep(PROBE_INTERVAL)
        }
      })

    const timedOut = (record: SandboxRecord) =>
      Effect.map(now, (at) =>
        record.starting_since !== null &&
        DateTime.greaterThan(at, DateTime.addDuration(record.starting_since, config.sandboxStartTimeout))
      )

    const watch = (id: SandboxId) =>
      FiberMap.run(watchers, id, watchStart(id), { onlyIfMissing: true }).pipe(Effect.asVoid)

    /**
     * Moves a sandbox of this instance towards its desired state, from what the driver observes
     * now. Another instance's sandboxes are left to that instance.
     */
    const enforce = (record: SandboxRecord): Effect.Effect<void> =>
      Effect.gen(function*() {
        if (record.instance_id !== driver.instanceId || record.deleted_at !== null) return
        const { id } = record
        if (record.desired_state === "DELETED") {
          yield* driver.remove(refOf(record))
          const at = yield* now
          yield* transition(id, (r) =>
            r.deleted_at === null ? { deleted_at: at, session_key_sealed: null, exposed_urls: null } : undefined)
          return yield* Effect.logInfo("sandbox removed").pipe(Effect.annotateLogs({ sandbox_id: id }))
        }
        if (isGone(record.status)) return
        // Started by a request that has not recorded the process yet: that request carries on,
        // unless it never will (Hangar stopped in between) and the start timeout has passed.
        if (record.exposed_urls === null) {
          if (yield* timedOut(record)) {
            yield* driver.stop(refOf(record))
            yield* transition(id, (r) => (r.exposed_urls === null && !isGone(r.status) ? { status: "ERROR" } : undefined))
          }
          return
        }
        const observation = yield* driver.observe(refOf(record))
        if (observation._tag === "Gone") {
          yield* transition(id, (r) => (isGone(r.status) || r.desired_state === "DELETED" ? undefined : goneStatus(observation)))
          return yield* Effect.logWarning("sandbox process is gone").pipe(
            Effect.annotateLogs({ sandbox_id: id, exit_code: observation.exitCode })
          )
        }
        if (record.desired_state === "PAUSED") {
          if (observation._tag === "Running") yield* driver.pause(refOf(record))
          yield* transition(id, (r) =>
            r.desired_state === "PAUSED" && !isGone(r.status) && r.status !== "PAUSED" ? { status: "PAUSED" } : undefined)
          return
        }
        if (observation._tag === "Stopped") yield* driver.resume(refOf(record))
        const at = yield* now
        const updated = yield* transition(id, (r) =>
          r.desired_state === "RUNNING" && r.status === "PAUSED" ? { status: "STARTING", starting_since: at } : undefined)
        if (Option.isSome(updated) && updated.value.status === "STARTING") yield* watch(id)
      })

    /** The sandbox, if the user may see it: theirs and not being deleted. */
    const owned = (userId: UserId, id: SandboxId) =>
      Effect.flatMap(store.find(id), (found) =>
        Option.isSome(found) && found.value.created_by_user_id === userId && found.value.desired_state !== "DELETED"
          ? Effect.succeed(found.value)
          : Effect.fail(notFound))

    const afterActivation = (activation: Extract<Activation, { _tag: "Activated" }>) =>
      Option.match(activation.paused, {
        onNone: () => Effect.void,
        onSome: (paused) =>
          Effect.zipRight(
            Effect.logInfo("paused the oldest running sandbox for a new one").pipe(
              Effect.annotateLogs({ sandbox_id: paused.id })
            ),
            enforce(paused)
          )
      })

    const start = (userId: UserId, specId: Option.Option<SandboxSpecId>) =>
      Effect.gen(function*() {
        const spec = Option.match(specId, {
          onNone: () => Option.some(config.sandboxSpecs[0]),
          onSome: (id) => Arr.findFirst(config.sandboxSpecs, (spec) => spec.id === id)
        })
        if (Option.isNone(spec)) return yield* new NotFound({ detail: "Sandbox spec not found" })
        const sessionKey = generateSecret(SESSION_KEY_PREFIX)
        const at = yield* now
        const record = SandboxRecord.make({
          id: crypto.randomUUID() as SandboxId,
          created_by_user_id: userId,
          sandbox_spec_id: spec.value.id,
          status: "STARTING",
          desired_state: "RUNNING",
          version: 0,
          instance_id: driver.instanceId,
          session_key_hash: hashSecret(sessionKey),
          session_key_sealed: box.seal(sessionKey),
          process: null,
          exposed_urls: null,
          exit_code: null,
          starting_since: at,
          created_at: at,
          updated_at: at,
          deleted_at: null
        })
        const activation = yield* activateUntilDecided(store.insert(record, limit))
        if (activation._tag === "LimitReached") return yield* limitReached(activation.current)
        yield* afterActivation(activation)

        // Once recorded, a sandbox is started and recorded as such even if the client goes away.
        return yield* Effect.uninterruptible(launch(record, spec.value, sessionKey))
      })

    const launch = (record: SandboxRecord, spec: SandboxSpec, sessionKey: string) =>
      Effect.gen(function*() {
        const started = yield* Effect.either(driver.start({
          id: record.id,
          spec,
          sessionKey: Redacted.make(sessionKey),
          webhookBaseUrl
        }))
        if (started._tag === "Left") {
          yield* Effect.logWarning("sandbox failed to start").pipe(
            Effect.annotateLogs({ sandbox_id: record.id, reason: started.left.reason })
          )
          yield* driver.stop(refOf(record))
          const failed = yield* transition(record.id, (r) => (isGone(r.status) ? undefined : { status: "ERROR" }))
          return Option.getOrElse(failed, () => record)
        }
        const recorded = yield* transition(record.id, () => ({
          process: started.right.process,
          exposed_urls: started.right.exposedUrls
        }))
        if (Option.isNone(recorded)) return record
        yield* Effect.logInfo("sandbox started").pipe(
          Effect.annotateLogs({ sandbox_id: record.id, spec: spec.id, pid: started.right.process?.pid ?? null })
        )
        // Removed while it was being started: what was just started goes too.
        if (recorded.value.deleted_at !== null) {
          yield* driver.remove({ id: record.id, process: started.right.process })
          return recorded.value
        }
        // Paused or deleted meanwhile, it is brought to that state now; else its start is watched.
        yield* enforce(recorded.value)
        return Option.getOrElse(yield* store.find(record.id), () => recorded.value)
      })

    const pause = (userId: UserId, id: SandboxId) =>
      Effect.gen(function*() {
        const record = yield* owned(userId, id)
        if (record.status === "PAUSED" || record.desired_state === "PAUSED") return
        if (isGone(record.status)) return yield* new Conflict({ detail: `Sandbox is ${record.status}: it cannot be paused` })
        const updated = yield* transition(id, (r) => (r.desired_state === "RUNNING" ? { desired_state: "PAUSED" } : undefined))
        if (Option.isSome(updated)) yield* enforce(updated.value)
      })

    const resume = (userId: UserId, id: SandboxId) =>
      Effect.gen(function*() {
        const record = yield* owned(userId, id)
        if (record.desired_state === "RUNNING" && (record.status === "STARTING" || record.status === "RUNNING")) return
        if (isGone(record.status)) return yield* new Conflict({ detail: `Sandbox is ${record.status}: it cannot be resumed` })
        const activation = yield* activateUntilDecided(Effect.gen(function*() {
          const current = yield* owned(userId, id).pipe(Effect.orDie)
          const at = yield* now
          const patch: SandboxPatch = current.status === "PAUSED"
            ? { desired_state: "RUNNING", status: "STARTING", starting_since: at }
            : { desired_state: "RUNNING" }
          return yield* store.activate(id, current.version, patch, limit)
        }))
        if (activation._tag === "LimitReached") return yield* limitReached(activation.current)
        yield* afterActivation(activation)
        yield* enforce(activation.record)
        if (activation.record.status === "STARTING") yield* watch(id)
      })

    const remove = (userId: UserId, id: SandboxId) =>
      Effect.gen(function*() {
        const found = yield* store.find(id)
        if (Option.isNone(found) || found.value.created_by_user_id !== userId) return yield* notFound
        const updated = yield* transition(id, (r) => (r.desired_state === "DELETED" ? undefined : { desired_state: "DELETED" }))
        if (Option.isSome(updated)) yield* enforce(updated.value)
      })

    const sessionKeyOf = (record: SandboxRecord) =>
      record.status === "RUNNING" && record.session_key_sealed !== null
        ? Option.getOrNull(box.open(record.session_key_sealed))
        : null

    const vscodeUrl = (userId: UserId, id: SandboxId, baseUrl: Option.Option<URL>) =>
      Effect.gen(function*() {
        const record = yield* owned(userId, id)
        const vscode = record.status === "RUNNING" ? record.exposed_urls?.find((url) => url.name === "VSCODE") : undefined
        const token = sessionKeyOf(record)
        if (vscode === undefined || token === null) return yield* new NotFound({ detail: "The sandbox has no VSCODE URL" })
        const url = new URL(vscode.url)
        if (Option.isSome(baseUrl)) {
          url.protocol = baseUrl.value.protocol
          url.hostname = baseUrl.value.hostname
        }
        url.pathname = "/"
        url.search = new URLSearchParams({ tkn: token, folder: driver.workspacePath(id) }).toString()
        return url.toString()
      })

    const createDirectory = (userId: UserId, id: SandboxId, path: string) =>
      Effect.gen(function*() {
        const record = yield* owned(userId, id)
        if (isGone(record.status)) {
          return yield* new Conflict({ detail: `Sandbox is ${record.status}: its workspace is not available` })
        }
        return yield* driver.createDirectory(id, path).pipe(
          Effect.mapError((problem) =>
            problem._tag === "Outside"
              ? new PathOutsideWorkspace({ reason: problem.reason })
              : new Conflict({ detail: `${problem.path} exists and is not a directory` })
          )
        )
      })

    const reconcile = Effect.gen(function*() {
      // Traces first, records second: a sandbox is recorded before its driver leaves any trace,
      // so every trace seen here has its record in the list read after it.
      const traces = yield* driver.leftovers
      const records = yield* store.listForInstance(driver.instanceId)
      const known = new Set(records.filter((r) => r.desired_state !== "DELETED").map((r) => r.id))
      for (const id of traces) {
        if (known.has(id)) continue
        yield* driver.remove({ id, process: null })
        yield* Effect.logWarning("removed a sandbox no record knows").pipe(Effect.annotateLogs({ sandbox_id: id }))
      }
      for (const record of records) {
        yield* enforce(record).pipe(
          Effect.catchAllCause((cause) =>
            Effect.logError("reconciling a sandbox failed", cause).pipe(Effect.annotateLogs({ sandbox_id: record.id }))
          )
        )
        if (record.status === "STARTING" && record.desired_state === "RUNNING" && record.exposed_urls !== null) {
          yield* watch(record.id)
        }
      }
    })

    const reconcileLogged = reconcile.pipe(
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause) ? Effect.void : Effect.logError("sandbox reconciliation failed", cause)
      )
    )
    yield* reconcileLogged
    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(RECONCILE_INTERVAL), reconcileLogged)))

    return {
      specs: config.sandboxSpecs,
      start,
      search: (userId, { after, limit: size, status }) =>
        Effect.map(
          store.search({ userId, status, after, limit: size + 1 }),
          (rows) => pageOf(rows, size, (last): SandboxSortKey => [last.created_at.epochMillis, last.id])
        ),
      getMany: (userId, ids) =>
        Effect.forEach(ids, (id) => Effect.option(owned(userId, id)), { concurrency: 10 }),
      pause,
      resume,
      remove,
      sessionKeyOf,
      vscodeUrl,
      createDirectory,
      reconcile
    }
  })
)
