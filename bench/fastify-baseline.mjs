// The baseline Hangar is measured against: the same two endpoints, same JSON bodies, same
// semantics, on Fastify with node-postgres and no Effect. Like Hangar it answers the config's
// ETag with 304 and writes one JSON log line per request, buffered (pino, asynchronous
// destination), unless BENCH_FASTIFY_LOG=off. It reads the database Hangar wrote:
// PGlite (its own copy of Hangar's data directory, run by Hangar's embedded-database program and
// reached over its socket with a one-connection pool, exactly as Hangar does) or the Postgres at
// DATABASE_URL (a pool of 20, as Hangar).
import Fastify from "fastify"
import pino from "pino"
import { spawn } from "node:child_process"
import { createHash, timingSafeEqual } from "node:crypto"
import { mkdirSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"

const configBody = readFileSync(process.env.BENCH_CONFIG_BODY, "utf8")
const config = JSON.parse(configBody)
const etag = `"${createHash("sha256").update(configBody).digest("base64url").slice(0, 32)}"`
const matchesEtag = (header) =>
  header !== undefined &&
  (header.trim() === "*" || header.split(",").some((candidate) => candidate.trim().replace(/^W\//, "") === etag))
const logging = process.env.BENCH_FASTIFY_LOG !== "off"

const connect = async () => {
  if (process.env.DATABASE_URL) {
    return { pool: new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 }), close: async () => {} }
  }
  const dataDir = process.env.BENCH_PGLITE_DIR
  const socketDir = join(dataDir, "run")
  mkdirSync(socketDir, { recursive: true })
  const program = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "storage", "pglite", "server.js")
  const database = spawn(process.execPath, [program, dataDir, join(socketDir, ".s.PGSQL.5432")], {
    stdio: ["ignore", "inherit", "inherit", "ipc"]
  })
  await new Promise((resolve, reject) => {
    database.once("message", (message) => (message.ready ? resolve() : reject(new Error(message.error))))
    database.once("exit", (code) => reject(new Error(`the database exited with ${code}`)))
  })
  const pool = new pg.Pool({ host: socketDir, port: 5432, user: "postgres", database: "postgres", max: 1 })
  return {
    pool,
    close: async () => {
      await pool.end()
      await new Promise((resolve) => {
        database.once("exit", resolve)
        database.kill("SIGTERM")
      })
    }
  }
}

const { close, pool } = await connect()

const credential = (request) => {
  const token = request.headers["x-access-token"]?.trim()
  if (token) return token
  const authorization = request.headers.authorization?.trim()
  if (authorization && /^bearer\s+/i.test(authorization)) return authorization.replace(/^bearer\s+/i, "").trim() || null
  return null
}

const sha256 = (value) => createHash("sha256").update(value, "utf8").digest("hex")

const app = Fastify({
  loggerInstance: logging ? pino(pino.destination({ dest: 1, sync: false, minLength: 4096 })) : undefined,
  disableRequestLogging: true
})

if (logging) {
  app.addHook("onResponse", (request, reply, done) => {
    request.log.info({ method: request.method, path: request.url.split("?", 1)[0], status: reply.statusCode, duration_ms: reply.elapsedTime }, "request")
    done()
  })
}

app.get("/api/v1/web-client/config", async (request, reply) => {
  reply.header("etag", etag).header("cache-control", "no-cache")
  if (matchesEtag(request.headers["if-none-match"])) return reply.code(304).send()
  return config
})

app.post("/api/agent-profiles/:profile_id/activate", async (request, reply) => {
  const profileId = request.params.profile_id
  if (profileId.length > 128) {
    return reply.code(422).send({
      detail: [{ loc: ["path", "profile_id"], msg: "String should have at most 128 characters", type: "string_too_long", input: profileId, ctx: { max_length: 128 } }]
    })
  }
  const secret = credential(request)
  if (!secret) return reply.code(401).send({ detail: "Not authenticated" })
  const hash = sha256(secret)
  const { rows: keys } = await pool.query("SELECT * FROM api_keys WHERE key_hash = $1", [hash])
  const key = keys[0]
  if (!key || !timingSafeEqual(Buffer.from(key.key_hash, "hex"), Buffer.from(hash, "hex"))) {
    return reply.code(401).send({ detail: "Invalid API key" })
  }
  const now = Date.now()
  if (key.not_before && now < key.not_before.getTime()) return reply.code(401).send({ detail: "API key is not valid yet" })
  if (key.expires_at && now >= key.expires_at.getTime()) return reply.code(401).send({ detail: "API key has expired" })
  const orgHeader = request.headers["x-org-id"]?.trim()
  let membership
  if (key.org_id) {
    if (orgHeader && orgHeader !== key.org_id) return reply.code(403).send({ detail: "This API key is bound to another organization" })
    membership = (await pool.query("SELECT * FROM memberships WHERE org_id = $1 AND user_id = $2", [key.org_id, key.user_id])).rows[0]
  } else if (orgHeader) {
    membership = (await pool.query("SELECT * FROM memberships WHERE org_id = $1 AND user_id = $2", [orgHeader, key.user_id])).rows[0]
    if (!membership) return reply.code(403).send({ detail: "Not a member of this organization" })
  } else {
    membership = (await pool.query("SELECT * FROM memberships WHERE user_id = $1 ORDER BY created_at, org_id LIMIT 1", [key.user_id])).rows[0]
  }
  if (!membership) return reply.code(403).send({ detail: "Not a member of this organization" })
  const updated = await pool.query(
    `UPDATE memberships SET active_agent_profile_id = $3
     WHERE org_id = $1 AND user_id = $2
       AND EXISTS (SELECT 1 FROM agent_profiles WHERE org_id = $1 AND id = $3)`,
    [membership.org_id, membership.user_id, profileId]
  )
  if (updated.rowCount === 0) return reply.code(404).send({ detail: "Agent profile not found" })
  return { id: profileId, message: "Agent profile activated", agent_settings_applied: false }
})

await app.listen({ port: Number(process.env.PORT), host: "127.0.0.1" })
console.log("listening")
process.on("SIGTERM", async () => {
  await app.close()
  await close()
  process.exit(0)
})
