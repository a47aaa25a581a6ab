import * as Schema from "effect/Schema"

/**
 * The name of an agent or LLM profile: unique in its scope, and safe as a URL path segment, so
 * that it can be the resource's address (`/api/agent-profiles/{name}`).
 */
export const ProfileName = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/)
).annotations({
  description: "1 to 64 letters, digits, `.`, `_` or `-`, starting with a letter or digit",
  examples: ["default"]
})
export type ProfileName = typeof ProfileName.Type
