import { describe, expect, it } from "@effect/vitest"
import * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { AppConfig } from "../src/AppConfig.js"
import { env } from "./support/TestServer.js"

const load = (vars: Record<string, string>) =>
  Effect.either(AppConfig.pipe(Effect.provide(AppConfig.layer), Effect.provide(env(vars))))

const messageOf = (error: ConfigError.ConfigError): string =>
  error._op === "And" || error._op === "Or"
    ? `${messageOf(error.left)}; ${messageOf(error.right)}`
    : error.message

const failure = (vars: Record<string, string>) =>
  Effect.map(load(vars), (result) => {
    expect(Either.isLeft(result), `expected ${JSON.stringify(vars)} to be refused`).toBe(true)
    return messageOf((result as Either.Left<ConfigError.ConfigError, unknown>).left)
  })

describe("AppConfig", () => {
  it.effect("defaults when nothing is set", () =>
    Effect.gen(function*() {
      const config = yield* Effect.flatMap(load({}), (result) => result)
      expect(config.port).toBe(3000)
      expect(config.host).toBe("0.0.0.0")
      expect(config.storage).toBe("postgres")
      expect(config.dataDir).toBe("./data")
      expect(Option.isNone(config.databaseUrl)).toBe(true)
      expect(config.webClient.app_mode).toBe("oss")
      expect(config.maxAgentProfiles).toBe(50)
      expect(config.maxLlmProfiles).toBe(10)
    }))

  it.effect("reads the profile limits, refusing anything but a positive integer", () =>
    Effect.gen(function*() {
      const config = yield* Effect.flatMap(load({ HANGAR_MAX_AGENT_PROFILES: "3", HANGAR_MAX_LLM_PROFILES: "1" }), (r) => r)
      expect([config.maxAgentProfiles, config.maxLlmProfiles]).toEqual([3, 1])
      expect(yield* failure({ HANGAR_MAX_AGENT_PROFILES: "0" })).toBe(
        "HANGAR_MAX_AGENT_PROFILES: expected an integer >= 1 (got \"0\")"
      )
      expect(yield* failure({ HANGAR_MAX_LLM_PROFILES: "ten" })).toBe(
        "HANGAR_MAX_LLM_PROFILES: expected an integer >= 1 (got \"ten\")"
      )
    }))

  it.effect("keeps DATABASE_URL redacted", () =>
    Effect.gen(function*() {
      const config = yield* Effect.flatMap(
        load({ DATABASE_URL: "postgres://u:secret@db:5432/hangar", HANGAR_SECRET_KEY: Buffer.alloc(32, 7).toString("base64") }),
        (r) => r
      )
      expect(Option.map(config.databaseUrl, Redacted.value)).toEqual(Option.some("postgres://u:secret@db:5432/hangar"))
      expect(String(config.databaseUrl)).not.toContain("secret")
    }))

  it.effect("a bad value names the variable and what it accepts", () =>
    Effect.gen(function*() {
      expect(yield* failure({ HANGAR_APP_MODE: "enterprise" })).toBe(
        "HANGAR_APP_MODE: expected one of oss, saas (got \"enterprise\")"
      )
      expect(yield* failure({ PORT: "abc" })).toBe("PORT: expected an integer 0..65535 (got \"abc\")")
      expect(yield* failure({ PORT: "70000" })).toContain("PORT: expected an integer 0..65535")
      expect(yield* failure({ HANGAR_DEPLOYMENT_MODE: "on_prem" })).toBe(
        "HANGAR_DEPLOYMENT_MODE: expected one of cloud, self_hosted (got \"on_prem\")"
      )
      expect(yield* failure({ HANGAR_STORAGE: "sqlite" })).toContain("HANGAR_STORAGE: expected one of postgres, memory")
      expect(yield* failure({ HANGAR_FEATURE_ENABLE_BILLING: "maybe" })).toBe(
        "HANGAR_FEATURE_ENABLE_BILLING: expected true or false (got \"maybe\")"
      )
      expect(yield* failure({ HANGAR_PROVIDERS_CONFIGURED: "git_host_a,svn" })).toContain(
        "HANGAR_PROVIDERS_CONFIGURED: expected a comma-separated list of provider types (git_host_a, "
      )
      expect(yield* failure({ HANGAR_MAINTENANCE_START_TIME: "tomorrow" })).toContain(
        "HANGAR_MAINTENANCE_START_TIME: expected an RFC 3339 date-time"
      )
    }))

  it.effect("a malformed JSON variable says where it went wrong", () =>
    Effect.gen(function*() {
      const notJson = yield* failure({ HANGAR_ACP_PROVIDERS: "[{" })
      expect(notJson).toMatch(/^HANGAR_ACP_PROVIDERS: expected JSON: an array of/)
      const wrongShape = yield* failure({ HANGAR_ACP_PROVIDERS: "[{\"key\": \"a\", \"display_name\": 1}]" })
      expect(wrongShape).toMatch(/^HANGAR_ACP_PROVIDERS: .*at \[0\]\["display_name"\]: Expected string, actual 1/)
      expect(yield* failure({ HANGAR_PROVIDER_DEFAULT_HOSTS: "[]" })).toMatch(/^HANGAR_PROVIDER_DEFAULT_HOSTS: /)
    }))

  it.effect("never echoes a secret back", () =>
    Effect.gen(function*() {
      const message = yield* failure({ DATABASE_URL: "not a url with password hunter2" })
      expect(message).toMatch(/^DATABASE_URL: expected an absolute URL/)
      expect(message).not.toContain("hunter2")
    }))

  it.effect("an empty variable counts as unset", () =>
    Effect.gen(function*() {
      const config = yield* Effect.flatMap(load({ PORT: "", HANGAR_AUTH_URL: "", HANGAR_EMAIL_CHANGE_ENABLED: "" }), (r) => r)
      expect(config.port).toBe(3000)
      expect(config.webClient.auth_url).toBeNull()
      expect(config.webClient.email_change_enabled).toBe(true)
    }))

  it.effect("sandbox settings: defaults, and the built-in spec when none is configured", () =>
    Effect.gen(function*() {
      const config = yield* Effect.flatMap(load({}), (r) => r)
      expect(config.maxConcurrentSandboxes).toBe(5)
      expect(config.sandboxLimitPolicy).toBe("reject")
      expect(config.sandboxDriver).toBe("process")
      expect(Duration.toSeconds(config.sandboxStartTimeout)).toBe(120)
      expect(Option.isNone(config.publicUrl)).toBe(true)
      expect(config.sandboxSpecs.map((spec) => spec.id)).toEqual(["reference-agent-server"])
      const set = yield* Effect.flatMap(load({
        HANGAR_MAX_CONCURRENT_SANDBOXES: "2",
        HANGAR_SANDBOX_LIMIT_POLICY: "pause_oldest",
        HANGAR_SANDBOX_DRIVER: "memory",
        HANGAR_SANDBOX_START_TIMEOUT: "5",
        HANGAR_PUBLIC_URL: "https://hangar.example.com/",
        HANGAR_SANDBOX_SPECS: JSON.stringify([{ id: "a", command: ["run", "{port}"] }, { id: "b", command: ["b"] }])
      }), (r) => r)
      expect(set).toMatchObject({ maxConcurrentSandboxes: 2, sandboxLimitPolicy: "pause_oldest", sandboxDriver: "memory" })
      expect(Duration.toSeconds(set.sandboxStartTimeout)).toBe(5)
      expect(set.publicUrl).toEqual(Option.some("https://hangar.example.com"))
      expect(set.sandboxSpecs.map((spec) => [spec.id, spec.command, spec.initial_env, spec.working_dir])).toEqual([
        ["a", ["run", "{port}"], {}, null],
        ["b", ["b"], {}, null]
      ])
    }))

  it.effect("HANGAR_SANDBOX_SPECS may name a file with @", () =>
    Effect.gen(function*() {
      const file = join(mkdtempSync(join(tmpdir(), "hangar-specs-")), "specs.json")
      writeFileSync(file, JSON.stringify([{ id: "from-file", command: ["x"], initial_env: { A: "1" }, working_dir: "w" }]))
      const config = yield* Effect.flatMap(load({ HANGAR_SANDBOX_SPECS: `@${file}` }), (r) => r)
      expect(config.sandboxSpecs[0]).toMatchObject({ id: "from-file", initial_env: { A: "1" }, working_dir: "w" })
      expect(yield* failure({ HANGAR_SANDBOX_SPECS: "@/nonexistent/specs.json" })).toMatch(
        /^HANGAR_SANDBOX_SPECS: expected JSON, inline or as @file: .*cannot read \/nonexistent\/specs\.json \(ENOENT\)/
      )
    }))

  it.effect("bad sandbox settings name their variable", () =>
    Effect.gen(function*() {
      expect(yield* failure({ HANGAR_MAX_CONCURRENT_SANDBOXES: "0" })).toContain(
        "HANGAR_MAX_CONCURRENT_SANDBOXES: expected an integer >= 1"
      )
      expect(yield* failure({ HANGAR_SANDBOX_LIMIT_POLICY: "queue" })).toBe(
        "HANGAR_SANDBOX_LIMIT_POLICY: expected one of reject, pause_oldest (got \"queue\")"
      )
      expect(yield* failure({ HANGAR_SANDBOX_DRIVER: "docker" })).toContain("HANGAR_SANDBOX_DRIVER: expected one of process, memory")
      expect(yield* failure({ HANGAR_SANDBOX_START_TIMEOUT: "soon" })).toContain("HANGAR_SANDBOX_START_TIMEOUT: expected an integer >= 1")
      expect(yield* failure({ HANGAR_PUBLIC_URL: "not a url" })).toContain("HANGAR_PUBLIC_URL: expected an absolute URL")
      for (
        const [specs, where] of [
          ["[]", ""],
          ["{}", ""],
          ["[{\"id\": \"a\", \"command\": []}]", "[0][\"command\"]"],
          ["[{\"id\": \"a b\", \"command\": [\"x\"]}]", "[0][\"id\"]"],
          ["[{\"id\": \"a\", \"command\": [\"x\"], \"image\": \"y\"}]", "[0][\"image\"]"],
          ["[{\"id\": \"a\", \"command\": [\"x\"]}, {\"id\": \"a\", \"command\": [\"y\"]}]", "spec ids must be unique"]
        ] as const
      ) {
        const message = yield* failure({ HANGAR_SANDBOX_SPECS: specs })
        expect(message, specs).toMatch(/^HANGAR_SANDBOX_SPECS: expected JSON, inline or as @file: /)
        expect(message, specs).toContain(where)
      }
    }))

  it.effect("HANGAR_DAILY_CONVERSATION_LIMIT: unset is unlimited, 0 and more are limits, anything else stops start-up", () =>
    Effect.gen(function*() {
      expect((yield* Effect.flatMap(load({}), (r) => r)).dailyConversationLimit).toEqual(Option.none())
      expect((yield* Effect.flatMap(load({ HANGAR_DAILY_CONVERSATION_LIMIT: "" }), (r) => r)).dailyConversationLimit)
        .toEqual(Option.none())
      for (const [value, limit] of [["0", 0], ["10", 10], [" 25 ", 25]] as const) {
        expect((yield* Effect.flatMap(load({ HANGAR_DAILY_CONVERSATION_LIMIT: value }), (r) => r)).dailyConversationLimit)
          .toEqual(Option.some(limit))
      }
      for (const value of ["-1", "ten", "1.5"]) {
        expect(yield* failure({ HANGAR_DAILY_CONVERSATION_LIMIT: value })).toBe(
          `HANGAR_DAILY_CONVERSATION_LIMIT: expected an integer >= 0 (got ${JSON.stringify(value)})`
        )
      }
    }))
})
