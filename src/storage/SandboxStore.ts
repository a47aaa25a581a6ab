import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import type * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { UserId } from "../domain/Identity.js"
import {
  isActive,
  type SandboxId,
  type SandboxPatch,
  type SandboxRecord,
  type SandboxStatus
} from "../domain/Sandbox.js"

/** The per-user concurrency limit (SPEC §7) and what to do at it. */
export interface SandboxLimit {
  readonly max: number
  readonly policy: "reject" | "pause_oldest"
}

/**
 * A record made active (inserted STARTING, or resumed) within the limit; under `pause_oldest`,
 * the sandbox that was given up for it (its desired state is now PAUSED: its instance pauses it).
 */
export type Activation =
  | { readonly _tag: "Activated"; readonly record: SandboxRecord; readonly paused: Option.Option<SandboxRecord> }
  | { readonly _tag: "LimitReached"; readonly current: number }
  /** The record changed since it was read (compare-and-set lost): read it again. */
  | { readonly _tag: "Conflict" }

/** The sort key of the sandbox search, newest first: (created_at in epoch millis, id). */
export type SandboxSortKey = readonly [number, string]

export interface SandboxSearch {
  readonly userId: UserId
  readonly status: Option.Option<SandboxStatus>
  /** Rows strictly after this key in the order. */
  readonly after: Option.Option<SandboxSortKey>
  readonly limit: number
}

/**
 * Sandbox records (SPEC §7). Every change is a compare-and-set on `version`: it applies only to
 * the version the caller read, bumps it, and sets `updated_at`; of two writers racing on one
 * record exactly one wins. Limit decisions are atomic per user, across replicas. Storage failures
 * are defects.
 */
export interface SandboxStoreShape {
  /** Inserts a new STARTING sandbox if the user's active sandboxes leave room (see `decideActivation`). */
  readonly insert: (record: SandboxRecord, limit: SandboxLimit) => Effect.Effect<Activation>
  /** Applies `patch` (which makes the sandbox active) if version and limit allow. */
  readonly activate: (
    id: SandboxId,
    version: number,
    patch: SandboxPatch,
    limit: SandboxLimit
  ) => Effect.Effect<Activation>
  /** Applies `patch` if the record is still at `version`; none when it is not (or is unknown). */
  readonly update: (id: SandboxId, version: number, patch: SandboxPatch) => Effect.Effect<Option.Option<SandboxRecord>>
  readonly find: (id: SandboxId) => Effect.Effect<Option.Option<SandboxRecord>>
  /** The user's sandboxes that are not being deleted, newest first, from a key on. */
  readonly search: (query: SandboxSearch) => Effect.Effect<ReadonlyArray<SandboxRecord>>
  /** The records run by one instance that are not removed yet. */
  readonly listForInstance: (instanceId: string) => Effect.Effect<ReadonlyArray<SandboxRecord>>
  /** The sandbox, not removed, whose session key hashes to this (how agent servers are recognised). */
  readonly findBySessionKeyHash: (hash: string) => Effect.Effect<Option.Option<SandboxRecord>>
}

export class SandboxStore extends Context.Tag("hangar/SandboxStore")<SandboxStore, SandboxStoreShape>() {}

export type LimitDecision =
  | { readonly _tag: "Allowed"; readonly pause: Option.Option<SandboxId> }
  | { readonly _tag: "LimitReached"; readonly current: number }

/**
 * Whether one more of the user's sandboxes may become active, given the others' records: within
 * the limit, yes; at it, under `pause_oldest`, yes if the oldest RUNNING one is paused for it.
 * Both stores decide with this, each under its own lock.
 */
export const decideActivation = (
  others: ReadonlyArray<Pick<SandboxRecord, "id" | "status" | "desired_state" | "created_at">>,
  limit: SandboxLimit,
  compare: (a: DateTime.Utc, b: DateTime.Utc) => number
): LimitDecision => {
  const active = others.filter(isActive)
  if (active.length < limit.max) return { _tag: "Allowed", pause: Option.none() }
  if (limit.policy === "pause_oldest" && active.length === limit.max) {
    const running = active.filter((record) => record.status === "RUNNING")
    const oldest = running.sort((a, b) => compare(a.created_at, b.created_at) || a.id.localeCompare(b.id))[0]
    if (oldest) return { _tag: "Allowed", pause: Option.some(oldest.id) }
  }
  return { _tag: "LimitReached", current: active.length }
}

/** What giving a sandbox up for another changes (its instance observes it paused later). */
export const pausedForLimit: SandboxPatch = { desired_state: "PAUSED" }
