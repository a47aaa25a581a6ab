import { describe, expect, it } from "@effect/vitest"
import * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { randomBytes } from "node:crypto"
import { mkdtempSync, readFileSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { AppConfig } from "../../src/AppConfig.js"
import { makeSecretBox, SecretBox, SecretBoxLive } from "../../src/services/SecretBox.js"
import { env } from "../support/TestServer.js"

const boxFrom = (vars: Record<string, string>) =>
  SecretBox.pipe(Effect.provide(SecretBoxLive.pipe(Layer.provide(AppConfig.layer), Layer.provide(env(vars)))))

describe("SecretBox", () => {
  const box = makeSecretBox(randomBytes(32))

  it("opens what it sealed; the sealed form reveals nothing and differs every time", () => {
    const secret = "sk-live-0123456789"
    const a = box.seal(secret)
    const b = box.seal(secret)
    expect(a).not.toBe(b)
    expect(a).not.toContain(secret)
    expect(a).not.toContain(Buffer.from(secret).toString("base64"))
    expect(a).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/)
    expect(box.open(a)).toEqual(Option.some(secret))
    expect(box.open(box.seal(""))).toEqual(Option.some(""))
  })

  it("refuses a tampered value, a value of another key, and garbage", () => {
    const sealed = box.seal("secret")
    const [v, nonce, tag, body] = sealed.split(".")
    const flipped = Buffer.from(body, "base64url")
    flipped[0] ^= 1
    expect(box.open([v, nonce, tag, flipped.toString("base64url")].join("."))).toEqual(Option.none())
    expect(makeSecretBox(randomBytes(32)).open(sealed)).toEqual(Option.none())
    expect(box.open("not sealed")).toEqual(Option.none())
  })

  it.effect("uses HANGAR_SECRET_KEY when set", () =>
    Effect.gen(function*() {
      const key = randomBytes(32)
      const configured = yield* boxFrom({ HANGAR_SECRET_KEY: key.toString("base64"), HANGAR_STORAGE: "memory" })
      expect(configured.open(makeSecretBox(key).seal("x"))).toEqual(Option.some("x"))
    }))

  it.effect("in embedded mode generates a key once into the data directory, 0600, and reuses it", () =>
    Effect.gen(function*() {
      const dataDir = mkdtempSync(join(tmpdir(), "hangar-secret-"))
      const first = yield* boxFrom({ HANGAR_DATA_DIR: dataDir })
      const file = join(dataDir, "secret-key")
      expect(statSync(file).mode & 0o777).toBe(0o600)
      expect(Buffer.from(readFileSync(file, "utf8").trim(), "base64")).toHaveLength(32)
      const second = yield* boxFrom({ HANGAR_DATA_DIR: dataDir })
      expect(second.open(first.seal("kept across restarts"))).toEqual(Option.some("kept across restarts"))
    }))

  it.effect("is required with DATABASE_URL, and a malformed one is named, never echoed", () =>
    Effect.gen(function*() {
      const message = (vars: Record<string, string>) =>
        Effect.map(Effect.either(AppConfig.pipe(Effect.provide(AppConfig.layer), Effect.provide(env(vars)))), (result) => {
          expect(Either.isLeft(result)).toBe(true)
          return ((result as Either.Left<ConfigError.ConfigError, unknown>).left as ConfigError.InvalidData).message
        })
      expect(yield* message({ DATABASE_URL: "postgres://db/hangar" })).toMatch(/^HANGAR_SECRET_KEY: required with DATABASE_URL/)
      const malformed = yield* message({ HANGAR_SECRET_KEY: "c2hvcnQta2V5LXNlY3JldA==" })
      expect(malformed).toBe("HANGAR_SECRET_KEY: expected 32 bytes in base64 (openssl rand -base64 32)")
    }))
})
