import { randomUUID, timingSafeEqual } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { createDirectoryInside } from "./Workspace.js"

/**
 * The reference agent server (SPEC §7): what the built-in sandbox spec runs and what the tests
 * run. A stand-in for a real agent server, not an LLM agent: it answers probes, keeps
 * conversations and their events in memory, creates directories in its workspace and reports
 * conversations and events to Hangar's webhooks. Node built-ins only, configured by the
 * environment Hangar gives it.
 */

const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback
  if (value === undefined || value === "") {
    process.stderr.write(`agent-server: ${name} is not set\n`)
    process.exit(2)
  }
  return value
}

const sessionKey = Buffer.from(env("SESSION_API_KEY"), "utf8")
const port = Number(env("PORT"))
const host = env("HOST", "127.0.0.1")
const workspace = env("WORKSPACE_DIR", process.cwd())
const sandboxId = env("SANDBOX_ID", "unknown")
const webhookBase = process.env.WEBHOOK_BASE_URL?.replace(/\/+$/, "")
const startedAt = Date.now()

const log = (message: string, fields: Record<string, unknown> = {}) =>
  process.stdout.write(JSON.stringify({ time: new Date().toISOString(), msg: message, ...fields }) + "\n")

interface Conversation {
  readonly id: string
  readonly sandbox_id: string
  readonly execution_status: string
  readonly created_at: string
  readonly updated_at: string
  readonly [field: string]: unknown
}

const conversations = new Map<string, Conversation>()
const events = new Map<string, Array<Record<string, unknown>>>()

const send = (response: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  response.end(text)
}

const authorized = (request: IncomingMessage) => {
  const presented = request.headers["x-session-api-key"]
  if (typeof presented !== "string") return false
  const given = Buffer.from(presented, "utf8")
  return given.length === sessionKey.length && timingSafeEqual(given, sessionKey)
}

const MAX_BODY = 1_000_000

const readJson = (request: IncomingMessage) =>
  new Promise<unknown>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    request.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY) {
        reject(new Error("body too large"))
        request.destroy()
      } else {
        chunks.push(chunk)
      }
    })
    request.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8")
      try {
        resolve(text.trim() === "" ? {} : JSON.parse(text))
      } catch {
        reject(new Error("the body is not JSON"))
      }
    })
    request.on("error", reject)
  })

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Posts one webhook, retrying a few times with backoff; Hangar being away is not our failure. */
const postWebhook = async (path: string, body: unknown) => {
  if (!webhookBase) return
  const delays = [200, 400, 800, 1600, 3200]
  for (let attempt = 0; attempt <= delays.length; attempt++) {
    try {
      const response = await fetch(`${webhookBase}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-session-api-key": sessionKey.toString("utf8") },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(5000)
      })
      if (response.ok) return
      // A refusal will not change on retry; only server-side failures are retried.
      if (response.status < 500) {
        log("webhook refused", { path, status: response.status })
        return
      }
    } catch {
      // Unreachable or timed out: retried below.
    }
    if (attempt < delays.length) await new Promise((resolve) => setTimeout(resolve, delays[attempt]))
  }
  log("webhook undelivered", { path })
}

/** Each conversation's webhooks go out one after another, so Hangar receives them in order. */
const deliveries = new Map<string, Promise<void>>()

const deliver = (conversationId: string, path: string, body: unknown) => {
  const next = (deliveries.get(conversationId) ?? Promise.resolve()).then(() => postWebhook(path, body))
  deliveries.set(conversationId, next)
}

const ERROR_EVENT_KIND = "ConversationErrorEvent"

/** Records events of a conversation (an id and a timestamp added where missing) and reports them. */
const addEvents = (conversation: Conversation, batch: ReadonlyArray<Record<string, unknown>>) => {
  const now = new Date().toISOString()
  const stored: Array<Record<string, unknown>> = batch.map((event) => ({ id: randomUUID(), timestamp: now, ...event }))
  events.set(conversation.id, [...(events.get(conversation.id) ?? []), ...stored])
  if (stored.some((event) => event.kind === ERROR_EVENT_KIND)) {
    conversations.set(conversation.id, { ...conversation, execution_status: "error", updated_at: now })
  }
  deliver(conversation.id, `/events/${encodeURIComponent(conversation.id)}`, stored)
  return stored
}

const createConversation = (body: Record<string, unknown>): Conversation => {
  const now = new Date().toISOString()
  const id = typeof body.id === "string" && body.id !== "" ? body.id : randomUUID()
  const conversation: Conversation = {
    ...body,
    id,
    sandbox_id: sandboxId,
    execution_status: "idle",
    created_at: conversations.get(id)?.created_at ?? now,
    updated_at: now
  }
  conversations.set(id, conversation)
  return conversation
}

const routes = async (request: IncomingMessage, response: ServerResponse) => {
  const path = (request.url ?? "/").split("?", 1)[0]
  const method = request.method ?? "GET"

  if (method === "GET" && path === "/alive") return send(response, 200, { status: "ok" })
  if (method === "GET" && path === "/health") {
    return send(response, 200, {
      status: "healthy",
      sandbox_id: sandboxId,
      uptime_seconds: Math.round((Date.now() - startedAt) / 1000),
      conversations: conversations.size
    })
  }
  if (!path.startsWith("/api/")) return send(response, 404, { detail: "Not Found" })
  if (!authorized(request)) return send(response, 401, { detail: "Invalid or missing X-Session-API-Key" })

  if (path === "/api/conversations" && method === "POST") {
    const body = await readJson(request)
    if (!isObject(body)) return send(response, 422, { detail: "The body must be a JSON object" })
    const conversation = createConversation(body)
    deliver(conversation.id, "/conversations", conversation)
    if (typeof body.initial_message === "string") {
      addEvents(conversation, [{ kind: "MessageEvent", source: "user", text: body.initial_message }])
    }
    return send(response, 201, conversation)
  }
  if (path === "/api/conversations" && method === "GET") {
    return send(response, 200, { items: Array.from(conversations.values()) })
  }
  const one = /^\/api\/conversations\/([^/]+)$/.exec(path)
  if (one && method === "GET") {
    const conversation = conversations.get(decodeURIComponent(one[1]))
    return conversation ? send(response, 200, conversation) : send(response, 404, { detail: "Conversation not found" })
  }
  // Events as the agent would emit them: the tests post them here to have them reported.
  const ofOne = /^\/api\/conversations\/([^/]+)\/events$/.exec(path)
  if (ofOne) {
    const conversation = conversations.get(decodeURIComponent(ofOne[1]))
    if (!conversation) return send(response, 404, { detail: "Conversation not found" })
    if (method === "GET") return send(response, 200, { items: events.get(conversation.id) ?? [] })
    if (method === "POST") {
      const body = await readJson(request)
      const batch = Array.isArray(body) ? body : [body]
      if (!batch.every((event) => isObject(event) && typeof event.kind === "string")) {
        return send(response, 422, { detail: "Events are JSON objects with a kind" })
      }
      return send(response, 201, { items: addEvents(conversation, batch as Array<Record<string, unknown>>) })
    }
  }
  if (path === "/api/file/create_directory" && method === "POST") {
    const body = await readJson(request)
    if (!isObject(body) || typeof body.path !== "string") return send(response, 422, { detail: "path: a string is required" })
    const result = createDirectoryInside(workspace, body.path)
    if (result._tag === "Outside") return send(response, 422, { detail: `path: ${result.reason}` })
    if (result._tag === "NotADirectory") return send(response, 409, { detail: `${result.path} exists and is not a directory` })
    return send(response, 200, { success: true, path: result.path })
  }
  return send(response, 404, { detail: "Not Found" })
}

const server = createServer((request, response) => {
  routes(request, response).catch((error: unknown) => {
    if (!response.headersSent) send(response, 400, { detail: error instanceof Error ? error.message : "Bad request" })
  })
})

server.listen(port, host, () => log("agent server listening", { host, port, sandbox_id: sandboxId }))

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => server.close(() => process.exit(0)))
}
