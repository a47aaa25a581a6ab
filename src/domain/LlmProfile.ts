import * as Data from "effect/Data"
import * as Schema from "effect/Schema"
import { UserId } from "./Identity.js"
import { ProfileName } from "./Profiles.js"
import { Timestamp } from "./Timestamp.js"

/** The LLM a profile or the settings point an agent at; the key is stored sealed, never in clear. */
export const llmFields = {
  model: Schema.String,
  base_url: Schema.NullOr(Schema.String),
  api_version: Schema.NullOr(Schema.String),
  temperature: Schema.NullOr(Schema.Number),
  max_output_tokens: Schema.NullOr(Schema.Number)
}

export type LlmFields = Schema.Struct.Type<typeof llmFields>

/** A user's LLM profile as stored; `api_key_sealed` is the `SecretBox` seal of the key. */
export class LlmProfile extends Schema.Class<LlmProfile>("StoredLlmProfile")({
  user_id: UserId,
  name: ProfileName,
  ...llmFields,
  api_key_sealed: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

/** A rule an LLM configuration breaks, named by the field it is about. */
export interface FieldProblem {
  readonly field: string
  readonly msg: string
  readonly input: unknown
}

/** Values that break the rules below, every one of them reported. */
export class InvalidFields extends Data.TaggedError("InvalidFields")<{ readonly problems: ReadonlyArray<FieldProblem> }> {}

// LiteLLM-style names: `openai/gpt-4o`, `ollama/llama3:8b`, `openrouter/meta-llama/llama-3-70b`.
const modelPattern = /^[A-Za-z0-9][\w.:@+-]*(\/[\w.:@+-]+)*$/

export const modelProblem = (model: string): string | undefined =>
  model.trim() === ""
    ? "must not be empty"
    : model.length > 256
    ? "must be at most 256 characters"
    : modelPattern.test(model)
    ? undefined
    : "expected a model name such as openai/gpt-4o: letters, digits, '.', '_', '-', ':', '@' or '+', " +
      "with '/' between the provider and the model"

export const baseUrlProblem = (url: string): string | undefined => {
  if (!URL.canParse(url)) return "not an absolute URL"
  const parsed = new URL(url)
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return "must be an http or https URL"
  // A key in the URL would be stored and shown in clear.
  if (parsed.username !== "" || parsed.password !== "") return "must not carry credentials: use api_key"
  return undefined
}

export const temperatureProblem = (value: number): string | undefined =>
  value >= 0 && value <= 2 ? undefined : "must be between 0 and 2"

export const maxOutputTokensProblem = (value: number): string | undefined =>
  Number.isInteger(value) && value >= 1 && value <= 10_000_000 ? undefined : "must be an integer from 1 to 10000000"

/** Providers that run on the caller's own machine and take no key. */
const localProviders = new Set(["ollama", "ollama_chat", "lm_studio", "hosted_vllm", "vllm", "llamafile"])

const privateIpv4 = (host: string) => {
  const parts = host.split(".").map(Number)
  if (parts.length !== 4 || parts.some((part) => !Number.isInteger(part) || part < 0 || part > 255)) return false
  const [a, b] = parts
  return a === 127 || a === 10 || a === 0 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) ||
    (a === 169 && b === 254)
}

/** This machine, a container host or a private network: where self-hosted model servers live. */
export const isLocalHost = (hostname: string): boolean => {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "")
  return host === "localhost" || host.endsWith(".localhost") || host.endsWith(".local") ||
    host === "host.docker.internal" || privateIpv4(host) ||
    host === "::1" || /^f[cd][0-9a-f]{2}:/.test(host) || host.startsWith("fe80:")
}

/**
 * Whether the model needs an API key: hosted providers do; a model served locally (a local
 * provider prefix, or a `base_url` on this machine or a private network) does not.
 */
export const needsApiKey = (model: string, baseUrl: string | null): boolean => {
  const slash = model.indexOf("/")
  if (slash > 0 && localProviders.has(model.slice(0, slash).toLowerCase())) return false
  return !(baseUrl !== null && URL.canParse(baseUrl) && isLocalHost(new URL(baseUrl).hostname))
}

/** The field's problem under `rule`, if it has a value that breaks it (null and absent are fine). */
export const ruleProblem = <A>(
  field: string,
  value: A | null | undefined,
  rule: (value: A) => string | undefined
): ReadonlyArray<FieldProblem> => {
  if (value === null || value === undefined) return []
  const msg = rule(value)
  return msg === undefined ? [] : [{ field, msg, input: value }]
}

/** Every rule the configuration breaks; empty when it is valid. */
export const llmProblems = (fields: LlmFields & { readonly hasApiKey: boolean }): ReadonlyArray<FieldProblem> => {
  const keyMissing = !fields.hasApiKey && modelProblem(fields.model) === undefined && needsApiKey(fields.model, fields.base_url)
  return [
    ...ruleProblem("model", fields.model, modelProblem),
    ...ruleProblem("base_url", fields.base_url, baseUrlProblem),
    ...ruleProblem("temperature", fields.temperature, temperatureProblem),
    ...ruleProblem("max_output_tokens", fields.max_output_tokens, maxOutputTokensProblem),
    ...(keyMissing
      ? [{
        field: "api_key",
        msg: "required for a hosted provider (only local models, or a base_url on a local or private network, go without)",
        input: null
      }]
      : [])
  ]
}
