/**
 * `npm run bench`: Hangar, built as it runs in production, against a Fastify baseline with the
 * same semantics and a bare `node:http` floor, in one run, on the same data.
 *
 * Every server runs as its own process for the whole run; the load generator (autocannon, in this
 * process) drives one server at a time at a fixed number of connections. Each figure is the
 * median of several rounds, and the servers' order rotates from round to round, so that drift in
 * the machine's speed falls on all of them alike. Warm-up traffic is sent and discarded before
 * every measured window. Peak RSS is the kernel's high-water mark (`VmHWM`) of each process.
 */
import autocannon from "autocannon"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { cpSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { cpus, freemem, totalmem, tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import { freshPostgresUrl } from "../test/support/Databases.js"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP ?? 2)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
/** Members activating profiles, each with a key of their own. */
const MEMBERS = 50
/** While iterating on one endpoint: `BENCH_ENDPOINTS=config` or `activate`. */
const ENDPOINTS = new Set((process.env.BENCH_ENDPOINTS ?? "config,activate").split(",").map((e) => e.trim()))

interface Server {
  readonly name: "hangar" | "fastify" | "fastify, no logging" | "bare"
  readonly url: string
  readonly child: ChildProcess
}

interface Endpoint {
  readonly name: string
  readonly method: "GET" | "POST"
  readonly path: string
  readonly headers: Record<string, string>
  /** When requests differ: the path and headers of the i-th request. */
  readonly vary?: (i: number) => { readonly path: string; readonly headers: Record<string, string> }
}

interface Sample {
  readonly rps: number
  readonly p50: number
  readonly p99: number
}

const log = (message: string) => process.stderr.write(`bench: ${message}\n`)

let nextPort = 40_000 + Math.floor(Math.random() * 10_000)

/** Polls `url` until it answers 200 (Hangar answers 503 while it starts), for at most a minute. */
const ready = async (child: ChildProcess, url: string, what: string, logFile: string) => {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${what} exited (${child.exitCode ?? child.signalCode}): ${readFileSync(logFile, "utf8").slice(-2000)}`)
    }
    const answered = await fetch(url, { signal: AbortSignal.timeout(2000) }).then(async (response) => {
      await response.arrayBuffer()
      return response.ok
    }, () => false)
    if (answered) return
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 100))
  }
  throw new Error(`${what} did not start: ${readFileSync(logFile, "utf8").slice(-2000)}`)
}

/**
 * A server process whose output goes where production sends it, a file, not through this
 * process (which also generates the load).
 */
const startServer = async (
  name: Server["name"],
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  logFile: string,
  probePath: string
): Promise<Server> => {
  const port = nextPort++
  const output = openSync(logFile, "a")
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH, PORT: String(port), HOST: "127.0.0.1", ...env },
    stdio: ["ignore", output, output]
  })
  const url = `http://127.0.0.1:${port}`
  await ready(child, `${url}${probePath}`, name, logFile)
  return { name, url, child }
}

/**
 * The node command `npm start` runs (after its build), so Hangar runs here exactly as in
 * production: same flags, logging JSON lines at info.
 */
const productionArgs = (): Array<string> => {
  // To compare node flags: `BENCH_NODE_FLAGS="--max-semi-space-size=8"` replaces the start script's.
  const override = process.env.BENCH_NODE_FLAGS
  if (override !== undefined) return [...override.split(/\s+/).filter((f) => f !== ""), join(root, "dist/main.js")]
  const start: string = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).scripts.start
  const command = start.split("&&").map((part) => part.trim()).find((part) => part.startsWith("node "))
  if (!command) throw new Error(`cannot find the node command in the start script: ${start}`)
  return command.split(/\s+/).slice(1).map((arg) => (arg.endsWith(".js") ? join(root, arg) : arg))
}

const startHangar = (env: Record<string, string>, logFile: string) =>
  startServer("hangar", productionArgs(), env, logFile, "/healthz")

const startScript = (name: Exclude<Server["name"], "hangar">, script: string, env: Record<string, string>, logFile: string) =>
  startServer(name, [join(root, "bench", script)], env, logFile, "/api/v1/web-client/config")

/** SIGTERM, and SIGKILL if the server has not exited 15 s later. */
const stop = async (server: Server) => {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return
  const exited = new Promise((resolvePromise) => server.child.on("exit", resolvePromise))
  server.child.kill("SIGTERM")
  const insist = setTimeout(() => server.child.kill("SIGKILL"), 15_000)
  await exited
  clearTimeout(insist)
}

/** Peak resident set size of a process so far, in MB. */
const peakRssMb = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  return Math.round(Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024)
}

/** The embedded database runs as a child of the server: its memory is reported on its own. */
const childPids = (pid: number): Array<number> =>
  readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number)

const load = (server: Server, endpoint: Endpoint, seconds: number) => {
  let sent = 0
  const vary = endpoint.vary
  return autocannon({
    url: `${server.url}${endpoint.path}`,
    method: endpoint.method,
    headers: endpoint.headers,
    connections: CONNECTIONS,
    duration: seconds,
    ...(vary
      ? {
        requests: [{
          setupRequest: (request) => {
            const { headers, path } = vary(sent++)
            return { ...request, path, headers: { ...request.headers, ...headers } }
          }
        }]
      }
      : {})
  })
}

const measure = async (server: Server, endpoint: Endpoint): Promise<Sample> => {
  await load(server, endpoint, WARMUP_SECONDS)
  const result = await load(server, endpoint, SECONDS)
  const failures = result.errors + result.timeouts + result.non2xx
  if (failures > 0) throw new Error(`${server.name} ${endpoint.name}: ${failures} failed requests of ${result.requests.total}`)
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 }
}

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/** Each server, one after another, ROUNDS times, rotating who goes first. */
const compare = async (endpoint: Endpoint, servers: ReadonlyArray<Server>) => {
  const samples = new Map<string, Array<Sample>>(servers.map((server) => [server.name, []]))
  for (let round = 0; round < ROUNDS; round++) {
    const order = servers.map((_, i) => servers[(i + round) % servers.length])
    for (const server of order) {
      const sample = await measure(server, endpoint)
      samples.get(server.name)!.push(sample)
      log(`${endpoint.name} round ${round + 1}/${ROUNDS} ${server.name}: ${Math.round(sample.rps)} req/s, p50 ${sample.p50} ms, p99 ${sample.p99} ms`)
    }
  }
  return servers.map((server) => {
    const list = samples.get(server.name)!
    return {
      server: server.name,
      rps: Math.round(median(list.map((s) => s.rps))),
      p50: median(list.map((s) => s.p50)),
      p99: median(list.map((s) => s.p99))
    }
  })
}

type Row = Awaited<ReturnType<typeof compare>>[number] & {
  readonly endpoint: string
  readonly database: string
  peakRssMb?: number
  /** Peak RSS of the embedded database process the server started, if any. */
  databaseRssMb?: number
}

const seedAndPrepare = async (hangar: Server, adminKey: string) => {
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${hangar.url}${path}`, {
      method: "POST",
      headers: { "x-access-token": adminKey, "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    if (!response.ok) throw new Error(`seeding ${path}: ${response.status} ${await response.text()}`)
    return response.json() as Promise<Record<string, any>>
  }
  // Members of `default` with keys bound to it, and two profiles: each request activates, for
  // the next member in turn, the profile that member does not have active, so that every request
  // really moves a pointer (and concurrent requests mostly touch different rows, as real ones do).
  const memberKeys: Array<string> = []
  for (let i = 0; i < MEMBERS; i++) {
    const member = await post("/api/organizations/provision-user", { email: `bench-${i}@example.com`, issue_api_key: true })
    memberKeys.push(member.api_key as string)
  }
  const profileIds: Array<string> = []
  for (const name of ["bench-a", "bench-b"]) profileIds.push((await post(`/api/agent-profiles/${name}`, { agent_kind: "openhands" })).id)
  return { memberKeys, profileIds }
}

const runDatabase = async (
  database: "pglite" | "postgres",
  work: string,
  withConfig: boolean,
  databaseUrl?: string
): Promise<Array<Row>> => {
  const adminKey = `hgr_bench_${randomBytes(16).toString("hex")}`
  const dataDir = join(work, `${database}-hangar`)
  const env: Record<string, string> = {
    HANGAR_DATA_DIR: dataDir,
    HANGAR_BOOTSTRAP_API_KEY: adminKey,
    // The baselines have no rate limiter; a per-key limit would measure 429s.
    HANGAR_AUTH_RATE_LIMIT: ""
  }
  const baselineEnv: Record<string, string> = { BENCH_CONFIG_BODY: join(work, "config.json") }
  if (database === "postgres") {
    env.DATABASE_URL = databaseUrl!
    env.HANGAR_SECRET_KEY = randomBytes(32).toString("base64")
    baselineEnv.DATABASE_URL = databaseUrl!
  }
  const logFile = join(work, `${database}-hangar.log`)

  // Seed through Hangar's API, then (PGlite) stop it so its data directory can be copied for the
  // baseline: PGlite is one process's database; the copy holds exactly the same rows.
  let hangar = await startHangar(env, logFile)
  const seeded = ENDPOINTS.has("activate") ? await seedAndPrepare(hangar, adminKey) : undefined
  writeFileSync(join(work, "config.json"), await (await fetch(`${hangar.url}/api/v1/web-client/config`)).text())
  if (database === "pglite") {
    await stop(hangar)
    // Each baseline process gets its own copy: PGlite is one process's database.
    for (const copy of ["pglite-fastify", "pglite-fastify-quiet"]) {
      cpSync(join(dataDir, "pgdata"), join(work, copy, "pgdata"), { recursive: true })
    }
    baselineEnv.BENCH_PGLITE_DIR = join(work, "pglite-fastify")
    hangar = await startHangar(env, logFile)
  }
  const fastify = await startScript("fastify", "fastify-baseline.mjs", baselineEnv, join(work, `${database}-fastify.log`))
  // For reference, the same Fastify without its log line: Hangar's ratio is to the one above.
  const quiet = withConfig
    ? await startScript(
      "fastify, no logging",
      "fastify-baseline.mjs",
      { ...baselineEnv, BENCH_FASTIFY_LOG: "off", BENCH_PGLITE_DIR: join(work, "pglite-fastify-quiet") },
      join(work, "fastify-quiet.log")
    )
    : undefined
  const bare = withConfig ? await startScript("bare", "bare-node.mjs", baselineEnv, join(work, "bare.log")) : undefined
  const servers = [hangar, fastify, ...(quiet ? [quiet] : []), ...(bare ? [bare] : [])]

  try {
    const rows: Array<Row> = []
    if (withConfig) {
      const config: Endpoint = { name: "config", method: "GET", path: "/api/v1/web-client/config", headers: {} }
      for (const row of await compare(config, servers)) rows.push({ ...row, endpoint: "GET /api/v1/web-client/config", database: "-" })
    }
    if (seeded) {
      const { memberKeys, profileIds } = seeded
      const activation = (i: number) => ({
        path: `/api/agent-profiles/${profileIds[Math.floor(i / memberKeys.length) % 2]}/activate`,
        headers: { "x-access-token": memberKeys[i % memberKeys.length] }
      })
      const activate: Endpoint = {
        name: `activate (${database})`,
        method: "POST",
        ...activation(0),
        vary: activation
      }
      for (const row of await compare(activate, [hangar, fastify])) {
        rows.push({ ...row, endpoint: "POST /api/agent-profiles/{id}/activate", database })
      }
    }
    for (const row of rows) {
      const pid = servers.find((s) => s.name === row.server)!.child.pid!
      row.peakRssMb = peakRssMb(pid)
      const children = childPids(pid)
      if (children.length > 0) row.databaseRssMb = children.map(peakRssMb).reduce((a, b) => a + b, 0)
    }
    return rows
  } finally {
    for (const server of servers) await stop(server)
  }
}

const ratio = (rows: ReadonlyArray<Row>, endpoint: string, database: string, against: string) => {
  const hangar = rows.find((r) => r.endpoint === endpoint && r.database === database && r.server === "hangar")
  const other = rows.find((r) => r.endpoint === endpoint && r.database === database && r.server === against)
  return hangar && other ? (hangar.rps / other.rps).toFixed(2) : "-"
}

const main = async () => {
  log("building dist/ (tsc)")
  execFileSync("npm", ["run", "build", "--silent"], { cwd: root, stdio: "inherit" })
  const work = mkdtempSync(join(tmpdir(), "hangar-bench-"))
  mkdirSync(work, { recursive: true })
  const started = Date.now()
  try {
    const rows = await runDatabase("pglite", work, ENDPOINTS.has("config"))
    const postgres = process.env.DATABASE_URL
    if (postgres) {
      // A database of its own, dropped after the run: every run starts from the same empty state
      // (no dead rows from earlier runs) and leaves the operator's database alone.
      rows.push(...await Effect.runPromise(Effect.scoped(Effect.flatMap(
        freshPostgresUrl(postgres),
        (url) => Effect.promise(() => runDatabase("postgres", work, false, url))
      ))))
    }
    const machine = {
      cores: cpus().length,
      cpu: cpus()[0]?.model ?? "unknown",
      memory_gb: Math.round(totalmem() / 2 ** 30),
      free_memory_gb: Math.round(freemem() / 2 ** 30),
      node: process.version
    }
    const date = new Date().toISOString()
    const table = [
      `Hangar benchmark, ${date.slice(0, 10)}, ${machine.cores} cores (${machine.cpu}), ${machine.memory_gb} GB, Node ${machine.node}`,
      `${CONNECTIONS} connections, median of ${ROUNDS} rounds of ${SECONDS} s after ${WARMUP_SECONDS} s of warm-up`,
      "",
      "| endpoint | database | server | req/s | p50 ms | p99 ms | peak RSS MB | embedded db RSS MB | hangar/fastify | hangar/bare |",
      "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
      ...rows.map((r) =>
        `| ${r.endpoint} | ${r.database} | ${r.server} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.peakRssMb} | ${r.databaseRssMb ?? "-"} | ${
          r.server === "hangar" ? ratio(rows, r.endpoint, r.database, "fastify") : ""
        } | ${r.server === "hangar" ? ratio(rows, r.endpoint, r.database, "bare") : ""} |`
      )
    ].join("\n")
    process.stdout.write(`${table}\n`)
    const result = { date, machine, connections: CONNECTIONS, rounds: ROUNDS, seconds: SECONDS, warmup_seconds: WARMUP_SECONDS, rows, table }
    const resultsDir = join(root, "bench", "results")
    mkdirSync(resultsDir, { recursive: true })
    writeFileSync(join(resultsDir, "latest.json"), JSON.stringify(result, null, 2) + "\n")
    log(`done in ${Math.round((Date.now() - started) / 1000)} s; results in bench/results/latest.json`)
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

main().catch((error) => {
  log(String(error?.stack ?? error))
  process.exit(1)
})
