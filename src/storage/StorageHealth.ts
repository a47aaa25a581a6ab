import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** What `/readyz` asks of storage: which backend serves, and whether it answers now. */
export interface StorageHealthShape {
  readonly backend: "memory" | "embedded" | "postgres"
  /** Fails with a human-readable reason when storage cannot serve requests. */
  readonly check: Effect.Effect<void, string>
}

export class StorageHealth extends Context.Tag("hangar/StorageHealth")<StorageHealth, StorageHealthShape>() {
  static readonly memory: Layer.Layer<StorageHealth> = Layer.succeed(StorageHealth, {
    backend: "memory",
    check: Effect.void
  })
}
