import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { chmodSync, mkdirSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { AppConfig } from "../AppConfig.js"
import type { ApiKeyId } from "../domain/Identity.js"
import { API_KEY_PREFIX, generateSecret, hashSecret, secretPrefix } from "../domain/Secrets.js"
import { IdentityStore } from "../storage/IdentityStore.js"

const keyRecord = (secret: string, now: DateTime.Utc) => ({
  id: crypto.randomUUID() as ApiKeyId,
  name: "bootstrap",
  key_hash: hashSecret(secret),
  key_prefix: secretPrefix(secret),
  created_at: now
})

/**
 * First start (SPEC §2): with `HANGAR_BOOTSTRAP_API_KEY`, ensure organisation `default`, its owner
 * `admin` and that key, on every start. Without it, on an empty database only: create them with a
 * fresh key, print the key once on stdout and write it to `$HANGAR_DATA_DIR/bootstrap-api-key`
 * (mode 0600). A database that has been bootstrapped is never bootstrapped again, so the key is
 * never printed again.
 */
export const BootstrapLive = Layer.effectDiscard(Effect.gen(function*() {
  const config = yield* AppConfig
  const store = yield* IdentityStore
  const now = yield* DateTime.now

  if (Option.isSome(config.bootstrapApiKey)) {
    const result = yield* store.bootstrap({ key: keyRecord(Redacted.value(config.bootstrapApiKey.value), now), onlyIfEmpty: false })
    if (Option.isSome(result) && result.value.keyCreated) yield* Effect.logInfo("stored the key of HANGAR_BOOTSTRAP_API_KEY")
    return
  }
  if (!(yield* store.isEmpty)) return

  const secret = generateSecret(API_KEY_PREFIX)
  const result = yield* store.bootstrap({ key: keyRecord(secret, now), onlyIfEmpty: true })
  // Another replica bootstrapped first: its key is the one.
  if (Option.isNone(result) || !result.value.keyCreated) return

  const persisted = config.storage !== "memory"
  const file = join(resolve(config.dataDir), "bootstrap-api-key")
  if (persisted) {
    yield* Effect.sync(() => {
      mkdirSync(resolve(config.dataDir), { recursive: true, mode: 0o700 })
      writeFileSync(file, `${secret}\n`, { mode: 0o600 })
      chmodSync(file, 0o600)
    })
  }
  // Deliberately not a log line: the key must not end up in log storage.
  yield* Effect.sync(() =>
    process.stdout.write(
      `Bootstrap API key for user admin of organization default (shown once${persisted ? `, also written to ${file}` : ", storage is volatile"}): ${secret}\n`
    )
  )
}))
