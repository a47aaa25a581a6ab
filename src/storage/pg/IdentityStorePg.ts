import * as SqlClient from "@effect/sql/SqlClient"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { ApiKey, Membership, Organization, type OrganizationId, type Role, User, type UserId } from "../../domain/Identity.js"
import { BOOTSTRAP_ORGANIZATION, BOOTSTRAP_USER, IdentityStore, type IdentityStoreShape } from "../IdentityStore.js"
import { sqlErrorsAreDefects, type WithSqlErrors } from "./Defects.js"
import { fromRow, toDate } from "./Rows.js"

const toOrganization = fromRow(Organization)
const toUser = fromRow(User)
const toMembership = fromRow(Membership)
const toApiKey = fromRow(ApiKey)

/** Serialises bootstraps across replicas, like the migration lock. */
const BOOTSTRAP_LOCK = 7_243_102

export const IdentityStorePg = Layer.effect(
  IdentityStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const createOrganization = (name: string) =>
      Effect.map(
        sql`INSERT INTO organizations (id, name, created_at)
            VALUES (${crypto.randomUUID()}, ${name}, now()) RETURNING *`,
        (rows) => toOrganization(rows[0])
      )

    const createUser = (name: string, email: string | null) =>
      Effect.map(
        sql`INSERT INTO users (id, name, email, created_at)
            VALUES (${crypto.randomUUID()}, ${name}, ${email}, now()) RETURNING *`,
        (rows) => toUser(rows[0])
      )

    // Inserts unless present, then reads: both statements see the winner of a concurrent race.
    const ensureMembership = (orgId: OrganizationId, userId: UserId, role: Role) =>
      Effect.zipRight(
        sql`INSERT INTO memberships (org_id, user_id, role, created_at)
            VALUES (${orgId}, ${userId}, ${role}, clock_timestamp())
            ON CONFLICT (org_id, user_id) DO NOTHING`,
        Effect.map(
          sql`SELECT * FROM memberships WHERE org_id = ${orgId} AND user_id = ${userId}`,
          (rows) => toMembership(rows[0])
        )
      )

    const insertApiKey = (key: ApiKey) =>
      sql`INSERT INTO api_keys (id, name, user_id, org_id, key_hash, key_prefix, created_at, last_used_at, not_before, expires_at)
          VALUES (${key.id}, ${key.name}, ${key.user_id}, ${key.org_id}, ${key.key_hash}, ${key.key_prefix},
                  ${toDate(key.created_at)}, ${toDate(key.last_used_at)}, ${toDate(key.not_before)}, ${toDate(key.expires_at)})`

    const store: WithSqlErrors<IdentityStoreShape> = {
      isEmpty: Effect.map(sql`SELECT NOT EXISTS (SELECT 1 FROM organizations) AS empty`, (rows) => rows[0].empty === true),
      createOrganization,
      findOrganization: (id) =>
        Effect.map(sql`SELECT * FROM organizations WHERE id = ${id}`, (rows) => Option.fromNullable(rows[0]).pipe(Option.map(toOrganization))),
      findUser: (id) =>
        Effect.map(sql`SELECT * FROM users WHERE id = ${id}`, (rows) => Option.fromNullable(rows[0]).pipe(Option.map(toUser))),
      provisionUser: ({ email, orgId, role }) =>
        sql.withTransaction(Effect.gen(function*() {
          const normalized = email.toLowerCase()
          const inserted = yield* sql`
            INSERT INTO users (id, name, email, created_at)
            VALUES (${crypto.randomUUID()}, ${normalized}, ${normalized}, now())
            ON CONFLICT (email) DO NOTHING RETURNING *`
          const user = inserted.length > 0
            ? toUser(inserted[0])
            : toUser((yield* sql`SELECT * FROM users WHERE email = ${normalized}`)[0])
          const membership = yield* ensureMembership(orgId, user.id, role)
          return { user, membership, created: inserted.length > 0 }
        })),
      addMembership: ensureMembership,
      findMembership: (orgId, userId) =>
        Effect.map(
          sql`SELECT * FROM memberships WHERE org_id = ${orgId} AND user_id = ${userId}`,
          (rows) => Option.fromNullable(rows[0]).pipe(Option.map(toMembership))
        ),
      listMemberships: (userId) =>
        Effect.map(
          sql`SELECT * FROM memberships WHERE user_id = ${userId} ORDER BY created_at, org_id`,
          (rows) => rows.map(toMembership)
        ),
      insertApiKey: (key) => Effect.asVoid(insertApiKey(key)),
      findApiKeyByHash: (keyHash) =>
        Effect.map(sql`SELECT * FROM api_keys WHERE key_hash = ${keyHash}`, (rows) => Option.fromNullable(rows[0]).pipe(Option.map(toApiKey))),
      listApiKeys: (userId) =>
        Effect.map(sql`SELECT * FROM api_keys WHERE user_id = ${userId} ORDER BY created_at, id`, (rows) => rows.map(toApiKey)),
      deleteApiKey: (userId, id) =>
        Effect.map(
          sql<{ key_hash: string }>`DELETE FROM api_keys WHERE id = ${id} AND user_id = ${userId} RETURNING key_hash`,
          (rows) => Option.fromNullable(rows[0]?.key_hash)
        ),
      authorizeKey: ({ keyId, orgId, userId }) =>
        Effect.map(
          Option.isSome(orgId)
            ? sql`SELECT EXISTS (SELECT 1 FROM api_keys WHERE id = ${keyId}) AS key_exists, m.*
                  FROM (SELECT 1) AS one
                  LEFT JOIN memberships AS m ON m.org_id = ${orgId.value} AND m.user_id = ${userId}`
            : sql`SELECT EXISTS (SELECT 1 FROM api_keys WHERE id = ${keyId}) AS key_exists, m.*
                  FROM (SELECT 1) AS one
                  LEFT JOIN LATERAL (
                    SELECT * FROM memberships WHERE user_id = ${userId} ORDER BY created_at, org_id LIMIT 1
                  ) AS m ON true`,
          (rows) => {
            const { key_exists, ...membership } = rows[0]
            return {
              keyExists: key_exists === true,
              membership: membership.org_id === null ? Option.none() : Option.some(toMembership(membership))
            }
          }
        ),
      recordKeyUsage: (usage) => {
        if (usage.size === 0) return Effect.void
        const ids = Array.from(usage.keys())
        const times = Array.from(usage.values(), (at) => DateTime.toDateUtc(at))
        return Effect.asVoid(sql`
          UPDATE api_keys SET last_used_at = usage.at
          FROM unnest(${ids}::text[], ${times}::timestamptz[]) AS usage (id, at)
          WHERE api_keys.id = usage.id AND (api_keys.last_used_at IS NULL OR api_keys.last_used_at < usage.at)`)
      },
      bootstrap: ({ key, onlyIfEmpty }) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`SELECT pg_advisory_xact_lock(${BOOTSTRAP_LOCK})`
          if (onlyIfEmpty && !(yield* store.isEmpty)) return Option.none()
          const existing = yield* sql`SELECT * FROM organizations WHERE name = ${BOOTSTRAP_ORGANIZATION} ORDER BY created_at LIMIT 1`
          const organization = existing.length > 0
            ? toOrganization(existing[0])
            : yield* createOrganization(BOOTSTRAP_ORGANIZATION)
          const owners = yield* sql`
            SELECT users.* FROM users JOIN memberships ON memberships.user_id = users.id
            WHERE memberships.org_id = ${organization.id} AND memberships.role = 'owner' AND users.name = ${BOOTSTRAP_USER}
            ORDER BY users.created_at LIMIT 1`
          const user = owners.length > 0 ? toUser(owners[0]) : yield* createUser(BOOTSTRAP_USER, null)
          yield* ensureMembership(organization.id, user.id, "owner")
          const known = yield* sql`SELECT 1 FROM api_keys WHERE key_hash = ${key.key_hash}`
          if (known.length === 0) {
            yield* insertApiKey(ApiKey.make({
              ...key,
              user_id: user.id,
              org_id: null,
              last_used_at: null,
              not_before: null,
              expires_at: null
            }))
          }
          return Option.some({ organization, user, keyCreated: known.length === 0 })
        }))
    }
    return sqlErrorsAreDefects<IdentityStoreShape>(store)
  })
)
