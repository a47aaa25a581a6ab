import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberMap from "effect/FiberMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type { DailyConversationLimitReached } from "../api/Errors.js"
import { NotFound } from "../api/Errors.js"
import { pageOf } from "../api/Pagination.js"
import { AppConfig } from "../AppConfig.js"
import {
  type ConversationId,
  ConversationRecord,
  type StartTaskId,
  StartTaskRecord,
  type Tags
} from "../domain/Conversation.js"
import type { AgentProfileId, OrganizationId, UserId } from "../domain/Identity.js"
import type { SandboxId, SandboxRecord } from "../domain/Sandbox.js"
import type { ProviderType } from "../domain/WebClientConfig.js"
import { AgentServerClient } from "../sandbox/AgentServerClient.js"
import { SandboxDriver } from "../sandbox/SandboxDriver.js"
import { AgentProfileStore } from "../storage/AgentProfileStore.js"
import { ConversationStore } from "../storage/ConversationStore.js"
import { type StartTaskSortKey, StartTaskStore } from "../storage/StartTaskStore.js"
import { DailyQuota, utcDay } from "./DailyQuota.js"
import { Sandboxes } from "./Sandboxes.js"

/** Who starts a conversation: the user, the organisation they act in, and their active agent profile there. */
export interface Starter {
  readonly userId: UserId
  readonly orgId: Option.Option<OrganizationId>
  readonly activeAgentProfileId: AgentProfileId | null
}

/** What a conversation is started with (SPEC §8); null: not given. */
export interface StartRequest {
  readonly sandbox_id: SandboxId | null
  readonly initial_message: string | null
  readonly title: string | null
  readonly selected_repository: string | null
  readonly selected_branch: string | null
  readonly git_provider: ProviderType | null
  readonly trigger: string | null
  readonly llm_model: string | null
  readonly agent_profile_id: AgentProfileId | null
  readonly parent_conversation_id: ConversationId | null
  readonly tags: typeof Tags.Type
}

/** A reference in the request to something the caller has no such thing as. */
export class UnknownReference extends Data.TaggedError("UnknownReference")<{
  readonly field: "agent_profile_id" | "parent_conversation_id"
  readonly reason: string
}> {}

export interface StartTaskPage {
  readonly items: ReadonlyArray<StartTaskRecord>
  readonly next: Option.Option<StartTaskSortKey>
}

/**
 * Starting conversations (SPEC §8). The request reserves a unit of the daily quota and stores a
 * start task; the rest runs in the background, one fiber per task, each step recorded on the task:
 * the sandbox (given, resumed if paused, or started), waiting for it to run, recording the
 * conversation, handing it to the sandbox's agent server. A task that fails ends in ERROR with a
 * plain-words detail, gives its quota unit back, loses the conversation it recorded and deletes
 * the sandbox it started. The owner alone sees a task.
 */
export interface StartTasksShape {
  readonly start: (
    starter: Starter,
    request: StartRequest
  ) => Effect.Effect<StartTaskRecord, NotFound | UnknownReference | DailyConversationLimitReached>
  /** In request order; none for ids that are unknown or not the caller's. */
  readonly getMany: (userId: UserId, ids: ReadonlyArray<StartTaskId>) => Effect.Effect<ReadonlyArray<Option.Option<StartTaskRecord>>>
  readonly search: (
    userId: UserId,
    query: { readonly after: Option.Option<StartTaskSortKey>; readonly limit: number }
  ) => Effect.Effect<StartTaskPage>
}

export class StartTasks extends Context.Tag("hangar/StartTasks")<StartTasks, StartTasksShape>() {}

/** A step that could not be taken, in words for the task's owner (never a key, a trace or SQL). */
class StepFailed extends Data.TaggedError("StepFailed")<{ readonly detail: string }> {}

const POLL_INTERVAL = Duration.millis(200)
/** Beyond the sandbox start timeout: the sandbox's own ERROR, which says more, comes first. */
const WAIT_GRACE = Duration.seconds(5)

const STOPPED = "Hangar stopped before the conversation was started"
const RESTARTED = "Hangar restarted before the conversation was started"
const INTERNAL = "An internal error stopped the conversation from starting"

export const StartTasksLive = Layer.scoped(
  StartTasks,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const tasks = yield* StartTaskStore
    const conversations = yield* ConversationStore
    const profiles = yield* AgentProfileStore
    const sandboxes = yield* Sandboxes
    const agents = yield* AgentServerClient
    const quota = yield* DailyQuota
    const { instanceId } = yield* SandboxDriver
    // Closed with the Layer: shutting down interrupts every run, and each cleans up after itself.
    const runs = yield* FiberMap.make<StartTaskId>()
    const waitLimit = Duration.sum(config.sandboxStartTimeout, WAIT_GRACE)

    /** A step's record, or the end of the run if the task was ended meanwhile. */
    const recorded = (step: Effect.Effect<Option.Option<StartTaskRecord>>) =>
      Effect.flatMap(step, Option.match({
        onNone: () => Effect.fail(new StepFailed({ detail: "The start task was ended meanwhile" })),
        onSome: Effect.succeed
      }))

    const sandboxOf = (userId: UserId, id: SandboxId) =>
      Effect.map(sandboxes.getMany(userId, [id]), ([found]) => found)

    /** The task's sandbox once RUNNING: a paused one is resumed, the wait bounded by the start timeout. */
    const untilRunning = (userId: UserId, id: SandboxId) =>
      Effect.gen(function*() {
        let resumed = false
        while (true) {
          const found = yield* sandboxOf(userId, id)
          if (Option.isNone(found)) return yield* new StepFailed({ detail: "The sandbox no longer exists" })
          const sandbox = found.value
          if (sandbox.status === "ERROR" || sandbox.status === "MISSING") {
            return yield* new StepFailed({ detail: `The sandbox did not start: it is ${sandbox.status}` })
          }
          if (sandbox.desired_state === "PAUSED" || sandbox.status === "PAUSED") {
            if (resumed) return yield* new StepFailed({ detail: "The sandbox was paused while the conversation was starting" })
            yield* sandboxes.resume(userId, id).pipe(
              Effect.mapError((error) =>
                new StepFailed({
                  detail: error._tag === "SandboxLimitReached"
                    ? `The sandbox cannot be resumed: ${error.detail.message}`
                    : `The sandbox cannot be resumed: ${error.detail}`
                })
              )
            )
            resumed = true
            continue
          }
          if (sandbox.status === "RUNNING") return sandbox
          yield* Effect.sleep(POLL_INTERVAL)
        }
      }).pipe(Effect.timeoutFail({
        duration: waitLimit,
        onTimeout: () =>
          new StepFailed({ detail: `The sandbox did not become RUNNING within ${Duration.toSeconds(waitLimit)} seconds` })
      }))

    const agentServerOf = (sandbox: SandboxRecord) =>
      Effect.gen(function*() {
        const url = sandbox.exposed_urls?.find((exposed) => exposed.name === "AGENT_SERVER")?.url
        const key = sandboxes.sessionKeyOf(sandbox)
        if (url === undefined || key === null) {
          return yield* new StepFailed({ detail: "The sandbox exposes no agent server" })
        }
        return { url, key: Redacted.make(key) }
      })

    /** Starts a sandbox for the task; once it exists, `started` knows it, so a failure or an interruption deletes it. */
    const startSandbox = (userId: UserId, started: { sandbox: Option.Option<SandboxId> }) =>
      sandboxes.start(userId, Option.none()).pipe(
        Effect.tap((sandbox) => Effect.sync(() => (started.sandbox = Option.some(sandbox.id)))),
        Effect.uninterruptible,
        Effect.map((sandbox) => sandbox.id),
        Effect.mapError((error) =>
          new StepFailed({
            detail: error._tag === "SandboxLimitReached"
              ? `No sandbox could be started: ${error.detail.message}`
              : "No sandbox could be started: the default sandbox spec is missing"
          })
        )
      )

    /** The steps after the request; `started` learns of the sandbox the task starts as soon as it exists. */
    const steps = (task: StartTaskRecord, request: StartRequest, started: { sandbox: Option.Option<SandboxId> }) =>
      Effect.gen(function*() {
        const userId = task.created_by_user_id
        const sandboxId = request.sandbox_id !== null ? request.sandbox_id : yield* startSandbox(userId, started)
        yield* recorded(tasks.advance(task.id, {
          status: "WAITING_FOR_SANDBOX",
          sandbox_id: sandboxId,
          started_sandbox: Option.isSome(started.sandbox)
        }))
        const sandbox = yield* untilRunning(userId, sandboxId)
        const agent = yield* agentServerOf(sandbox)

        const now = yield* DateTime.now
        const { initial_message, sandbox_id: _, ...metadata } = request
        const conversation = ConversationRecord.make({
          id: crypto.randomUUID() as ConversationId,
          created_by_user_id: userId,
          sandbox_id: sandboxId,
          ...metadata,
          public: false,
          execution_status: null,
          error: null,
          event_count: 0,
          created_at: now,
          updated_at: now
        })
        // Recorded before the agent server hears of it, so its first webhook finds it.
        yield* recorded(tasks.recordConversation(task.id, conversation, agent.url))
        yield* agents.createConversation({
          agentServerUrl: agent.url,
          sessionKey: agent.key,
          body: { id: conversation.id, initial_message, ...metadata }
        }).pipe(Effect.mapError((failure) => new StepFailed({ detail: failure.reason })))
        yield* recorded(tasks.complete(task.id))
        yield* Effect.logInfo("conversation started").pipe(
          Effect.annotateLogs({ task_id: task.id, conversation_id: conversation.id, sandbox_id: sandboxId })
        )
      })

    /**
     * Ends a task in ERROR: first its sandbox goes, if it started one (so no process outlives the
     * failure its owner sees), then the task fails, giving its quota unit back.
     */
    const abandon = (task: StartTaskRecord, startedSandbox: Option.Option<SandboxId>, detail: string) =>
      Effect.gen(function*() {
        if (Option.isSome(startedSandbox)) {
          yield* Effect.ignore(sandboxes.remove(task.created_by_user_id, startedSandbox.value))
        }
        const failed = yield* tasks.fail(task.id, detail)
        if (Option.isSome(failed)) {
          yield* Effect.logWarning("conversation start failed").pipe(Effect.annotateLogs({ task_id: task.id, detail }))
        }
      }).pipe(
        Effect.catchAllCause((cause) =>
          Effect.logError("cleaning up a failed conversation start failed", cause).pipe(
            Effect.annotateLogs({ task_id: task.id })
          )
        )
      )

    const detailOf = (cause: Cause.Cause<StepFailed>) =>
      Option.match(Cause.failureOption(cause), {
        onSome: (failure) => Effect.succeed(failure.detail),
        onNone: () =>
          Cause.isInterruptedOnly(cause)
            ? Effect.succeed(STOPPED)
            : Effect.as(Effect.logError("a conversation start died", cause), INTERNAL)
      })

    const run = (task: StartTaskRecord, request: StartRequest) => {
      const started = { sandbox: Option.none<SandboxId>() }
      return steps(task, request, started).pipe(
        Effect.onExit((exit) =>
          Exit.isSuccess(exit)
            ? Effect.void
            : Effect.flatMap(detailOf(exit.cause), (detail) => abandon(task, started.sandbox, detail))
        ),
        Effect.annotateLogs({ task_id: task.id })
      )
    }

    // Tasks this instance ran when it stopped without finishing them are dead: no other replica
    // runs them, and nothing resumes them.
    for (const task of yield* tasks.listUnfinished(instanceId)) {
      const startedSandbox = task.started_sandbox ? Option.fromNullable(task.sandbox_id) : Option.none<SandboxId>()
      yield* abandon(task, startedSandbox, RESTARTED)
    }

    const validate = (starter: Starter, request: StartRequest) =>
      Effect.gen(function*() {
        if (request.sandbox_id !== null && Option.isNone(yield* sandboxOf(starter.userId, request.sandbox_id))) {
          return yield* new NotFound({ detail: "Sandbox not found" })
        }
        if (request.agent_profile_id !== null) {
          const known = Option.isSome(starter.orgId) &&
            (yield* profiles.list(starter.orgId.value)).some((profile) => profile.id === request.agent_profile_id)
          if (!known) {
            return yield* new UnknownReference({
              field: "agent_profile_id",
              reason: "no agent profile of your organization has this id"
            })
          }
        }
        if (request.parent_conversation_id !== null) {
          const parent = yield* conversations.find(request.parent_conversation_id)
          if (Option.isNone(parent) || parent.value.created_by_user_id !== starter.userId) {
            return yield* new UnknownReference({ field: "parent_conversation_id", reason: "you have no conversation with this id" })
          }
        }
      })

    const start = (starter: Starter, request: StartRequest) =>
      Effect.gen(function*() {
        yield* validate(starter, request)
        const now = yield* DateTime.now
        const task = StartTaskRecord.make({
          id: crypto.randomUUID() as StartTaskId,
          created_by_user_id: starter.userId,
          status: "WORKING",
          detail: null,
          app_conversation_id: null,
          sandbox_id: null,
          started_sandbox: false,
          agent_server_url: null,
          instance_id: instanceId,
          quota_day: utcDay(now),
          created_at: now,
          updated_at: now
        })
        const limit = yield* quota.limitFor(starter.userId, starter.orgId)
        const creation = yield* tasks.create(task, limit)
        if (creation._tag === "LimitReached") {
          return yield* quota.limitReached(Option.getOrThrow(limit), creation.used, now)
        }
        yield* FiberMap.run(runs, task.id, run(task, {
          ...request,
          agent_profile_id: request.agent_profile_id ?? starter.activeAgentProfileId
        }))
        return creation.task
      })

    const owned = (userId: UserId) => (found: Option.Option<StartTaskRecord>) =>
      Option.filter(found, (task) => task.created_by_user_id === userId)

    return {
      start,
      getMany: (userId, ids) => Effect.forEach(ids, (id) => Effect.map(tasks.find(id), owned(userId)), { concurrency: 10 }),
      search: (userId, { after, limit }) =>
        Effect.map(
          tasks.search({ userId, after, limit: limit + 1 }),
          (rows) => pageOf(rows, limit, (last): StartTaskSortKey => [last.created_at.epochMillis, last.id])
        )
    }
  })
)
