import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto"
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { AppConfig } from "../AppConfig.js"

/**
 * Encryption of secrets Hangar must read back (LLM API keys, sandbox session keys): AES-256-GCM
 * with a random 96-bit nonce per value, sealed as `v1.<nonce>.<tag>.<ciphertext>` in base64url.
 * Tampering, or another key, makes `open` fail instead of returning garbage.
 */
export interface SecretBoxShape {
  readonly seal: (plaintext: string) => string
  readonly open: (sealed: string) => Option.Option<string>
}

export class SecretBox extends Context.Tag("hangar/SecretBox")<SecretBox, SecretBoxShape>() {}

export const makeSecretBox = (key: Uint8Array): SecretBoxShape => ({
  seal: (plaintext) => {
    const nonce = randomBytes(12)
    const cipher = createCipheriv("aes-256-gcm", key, nonce)
    const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
    return ["v1", nonce, cipher.getAuthTag(), ciphertext].map((part) =>
      typeof part === "string" ? part : part.toString("base64url")
    ).join(".")
  },
  open: (sealed) => {
    const [version, nonce, tag, ciphertext] = sealed.split(".")
    if (version !== "v1" || nonce === undefined || tag === undefined || ciphertext === undefined) return Option.none()
    try {
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(nonce, "base64url"))
      decipher.setAuthTag(Buffer.from(tag, "base64url"))
      return Option.some(
        Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]).toString("utf8")
      )
    } catch {
      return Option.none()
    }
  }
})

/**
 * The key: `HANGAR_SECRET_KEY` when set (required with DATABASE_URL, see AppConfig); otherwise in
 * embedded mode one generated once into `$HANGAR_DATA_DIR/secret-key` (mode 0600) and reused at
 * every start; in memory mode a fresh one per process, like the rest of its data.
 */
export const SecretBoxLive = Layer.effect(
  SecretBox,
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (Option.isSome(config.secretKey)) return makeSecretBox(Redacted.value(config.secretKey.value))
    if (config.storage === "memory") return makeSecretBox(randomBytes(32))
    return makeSecretBox(yield* Effect.sync(() => dataDirKey(resolve(config.dataDir))))
  })
)

const dataDirKey = (dataDir: string): Uint8Array => {
  const file = join(dataDir, "secret-key")
  if (existsSync(file)) {
    const key = Buffer.from(readFileSync(file, "utf8").trim(), "base64")
    if (key.length !== 32) throw new Error(`${file} does not hold a base64 32-byte key`)
    return key
  }
  const key = randomBytes(32)
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  writeFileSync(file, `${key.toString("base64")}\n`, { mode: 0o600, flag: "wx" })
  chmodSync(file, 0o600)
  return key
}
