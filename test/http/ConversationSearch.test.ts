import { expect, layer } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type { ConversationRecord } from "../../src/domain/Conversation.js"
import type { SandboxId } from "../../src/domain/Sandbox.js"
import { ConversationStore } from "../../src/storage/ConversationStore.js"
import { expectedIds, type Filters, newConversation, newUser, sortOrders } from "../support/Conversations.js"
import { backends } from "../support/Databases.js"
import { newMember } from "../support/Sandboxes.js"
import { call, testServer } from "../support/TestServer.js"

// Search over 10,000 stored conversations, through HTTP, on every backend: each filter and sort
// order, paged with small and large limits, answers exactly the rows and the order a brute-force
// computation here gives, every row once.

/** A deterministic generator, so a failure can be replayed. */
const random = (seed: number) => () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
  return seed / 2_147_483_648
}

const words = ["alpha", "Alpha", "beta", "é", "e", "😀", "\uFF01", "日本", "zeta", "Zeta", "a b", ""]
// sb-rare holds one conversation in 25, the four others the rest.
const sandboxIds = [
  ...Array.from({ length: 24 }, (_, i) => `sb-${i % 4}`),
  "sb-rare"
] as Array<SandboxId>
const base = Date.UTC(2026, 0, 1)

const generate = (userId: ConversationRecord["created_by_user_id"], count: number, seed: number) => {
  const next = random(seed)
  const pick = <A>(items: ReadonlyArray<A>) => items[Math.floor(next() * items.length)]
  return Array.from({ length: count }, () => {
    // Few distinct instants and titles, so that ties (broken by id) are everywhere.
    const created = base + Math.floor(next() * 2000) * 60_000
    const title = next() < 0.1 ? null : `${pick(words)} ${pick(words)}${next() < 0.5 ? "" : ` ${Math.floor(next() * 50)}`}`
    return newConversation(userId, {
      title,
      sandbox_id: pick(sandboxIds),
      created_at: DateTime.unsafeMake(created),
      updated_at: DateTime.unsafeMake(created + Math.floor(next() * 3) * 3_600_000)
    })
  })
}

const iso = (ms: number) => new Date(ms).toISOString()

const query = (filters: Filters) =>
  Object.entries(filters).map(([key, value]) =>
    `${key}=${encodeURIComponent(typeof value === "number" ? iso(value) : value)}`
  ).join("&")

// Every filter, alone and together; most narrow the 10,000 to a few hundred.
const filterSets: ReadonlyArray<Filters> = [
  {},
  { title__contains: "😀 " },
  { title__contains: "a b" },
  { created_at__gte: base + 500 * 60_000, created_at__lt: base + 560 * 60_000 },
  { updated_at__gte: base + 1500 * 60_000, updated_at__lt: base + 1550 * 60_000 },
  { sandbox_id__eq: "sb-rare" },
  { title__contains: "é", created_at__gte: base + 300 * 60_000, sandbox_id__eq: "sb-1", updated_at__lt: base + 1800 * 60_000 }
]

for (const backend of backends) {
  layer(testServer({}, backend.storage), { timeout: "600 seconds", excludeTestServices: true })(
    `search over 10,000 conversations on ${backend.name}`,
    (it) => {
      it.effect("every filter and sort order, in small and large pages, answers what brute force answers, each row once", () =>
        Effect.gen(function*() {
          const { api_key, user_id } = yield* newMember
          const records = generate(user_id, 10_000, 42)
          const store = yield* ConversationStore
          yield* store.insertMany(records)
          yield* store.insertMany(generate(newUser(), 300, 7))

          const pageThrough = (filters: Filters, order: string, limit: number) =>
            Effect.gen(function*() {
              const seen: Array<string> = []
              let pageId: string | null = null
              do {
                const params: string = [query(filters), `sort_order=${order}`, `limit=${limit}`, pageId && `page_id=${pageId}`]
                  .filter(Boolean).join("&")
                const page = yield* call("GET", `/api/v1/app-conversations/search?${params}`, { token: api_key })
                expect(page.status, JSON.stringify(page.body)).toBe(200)
                expect(page.body.items.length).toBeLessThanOrEqual(limit)
                seen.push(...page.body.items.map((item: any) => item.id))
                pageId = page.body.next_page_id
              } while (pageId !== null)
              return seen
            })

          for (const filters of filterSets) {
            const count = yield* call("GET", `/api/v1/app-conversations/count?${query(filters)}`, { token: api_key })
            const total = expectedIds(records, user_id, filters, "CREATED_AT").length
            expect(total).toBeGreaterThan(0)
            expect(count.body, JSON.stringify(filters)).toBe(total)
            // Small pages where results are a few hundred; every result by the largest pages too.
            const limits = total <= 1000 ? [31, 100] : [100]
            for (const order of sortOrders) {
              const expected = expectedIds(records, user_id, filters, order)
              for (const limit of limits) {
                const seen = yield* pageThrough(filters, order, limit)
                expect(new Set(seen).size).toBe(seen.length)
                expect(seen, `${order} by ${limit} with ${JSON.stringify(filters)}`).toEqual(expected)
              }
            }
          }
        }))
    }
  )
}
