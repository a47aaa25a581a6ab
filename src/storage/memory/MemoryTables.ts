import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import type { AgentProfile } from "../../domain/AgentProfile.js"
import type { AgentProfileId, ApiKey, ApiKeyId, Membership, Organization, OrganizationId, User, UserId } from "../../domain/Identity.js"
import type { LlmProfile } from "../../domain/LlmProfile.js"
import type { UserSettings } from "../../domain/UserSettings.js"
import type { SandboxId, SandboxRecord } from "../../domain/Sandbox.js"
import type { ConversationId, ConversationRecord, StartTaskId, StartTaskRecord, StoredEvent } from "../../domain/Conversation.js"

/**
 * The volatile database: every memory store works on these tables, so that an operation that
 * spans aggregates (deleting a profile clears the memberships pointing at it) can be atomic, as
 * it is in one Postgres transaction. Store methods run synchronously, hence atomically.
 */
export interface MemoryTablesShape {
  readonly organizations: Map<OrganizationId, Organization>
  readonly users: Map<UserId, User>
  readonly usersByEmail: Map<string, UserId>
  /** Keyed by `membershipKey(org, user)`. */
  readonly memberships: Map<string, Membership>
  readonly apiKeys: Map<ApiKeyId, ApiKey>
  readonly apiKeysByHash: Map<string, ApiKeyId>
  readonly agentProfiles: Map<AgentProfileId, AgentProfile>
  /** Keyed by `scopedKey(org, name)`. */
  readonly agentProfilesByName: Map<string, AgentProfileId>
  /** Keyed by `scopedKey(user, name)`. */
  readonly llmProfiles: Map<string, LlmProfile>
  readonly settings: Map<UserId, UserSettings>
  readonly sandboxes: Map<SandboxId, SandboxRecord>
  readonly conversations: Map<ConversationId, ConversationRecord>
  /** Each conversation's events in sequence order. */
  readonly conversationEvents: Map<ConversationId, Array<StoredEvent>>
  readonly startTasks: Map<StartTaskId, StartTaskRecord>
  /** Conversations counted per user and UTC day, keyed by `scopedKey(user, day)`. */
  readonly conversationUsage: Map<string, number>
  /** Daily conversation limit overrides, keyed by `scopedKey("user" | "organization", id)`. */
  readonly conversationLimits: Map<string, number>
}

export class MemoryTables extends Context.Tag("hangar/MemoryTables")<MemoryTables, MemoryTablesShape>() {
  static readonly layer = Layer.sync(MemoryTables, () => ({
    organizations: new Map(),
    users: new Map(),
    usersByEmail: new Map(),
    memberships: new Map(),
    apiKeys: new Map(),
    apiKeysByHash: new Map(),
    agentProfiles: new Map(),
    agentProfilesByName: new Map(),
    llmProfiles: new Map(),
    settings: new Map(),
    sandboxes: new Map(),
    conversations: new Map(),
    conversationEvents: new Map(),
    startTasks: new Map(),
    conversationUsage: new Map(),
    conversationLimits: new Map()
  }))
}

/** A key unique within a scope (an organisation, a user), as a composite primary key is. */
export const scopedKey = (scope: string, key: string) => `${scope}\u0000${key}`

export const membershipKey = (orgId: OrganizationId, userId: UserId) => scopedKey(orgId, userId)
