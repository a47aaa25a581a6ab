import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { spawn } from "node:child_process"
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type AddressInfo, type Server } from "node:net"
import { isAbsolute, join, resolve } from "node:path"
import { AppConfig } from "../AppConfig.js"
import { ExposedUrl, exposedUrlNames, type SandboxId, SandboxProcess } from "../domain/Sandbox.js"
import { createDirectoryInside, isWorkspaceProblem } from "./agent-server/Workspace.js"
import { groupMembers, listPids, readEnviron, readStat } from "./Procfs.js"
import {
  instanceIdentity,
  type Observation,
  SandboxDriver,
  type SandboxDriverShape,
  type SandboxRef,
  SandboxStartFailed
} from "./SandboxDriver.js"

/** The environment variable that marks a process as started by this Hangar instance. */
const OWNER_MARKER = "HANGAR_SANDBOX_OWNER"
const ID_MARKER = "SANDBOX_ID"

const freePorts = (count: number) =>
  Effect.promise(async () => {
    // All held open together, so the ports are distinct; released just before the sandbox binds them.
    const servers = await Promise.all(Array.from({ length: count }, () =>
      new Promise<Server>((resolvePort, reject) => {
        const server = createServer()
        server.once("error", reject)
        server.listen(0, "127.0.0.1", () => resolvePort(server))
      })))
    const ports = servers.map((server) => (server.address() as AddressInfo).port)
    await Promise.all(servers.map((server) => new Promise((closed) => server.close(closed))))
    return ports
  })

const signalGroup = (pgid: number, signal: NodeJS.Signals) => {
  try {
    process.kill(-pgid, signal)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error
  }
}

const signalProcess = (pid: number, signal: NodeJS.Signals) => {
  try {
    process.kill(pid, signal)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error
  }
}

/**
 * Each sandbox a detached process group (pgid = pid) on this machine, in
 * `$HANGAR_DATA_DIR/sandboxes/<id>`: its workspace, its log and `process.json` (pid and start
 * time). Its environment is the spec's `initial_env` and what the agent server needs, never
 * Hangar's own. Pause is SIGSTOP to the group, resume SIGCONT, stop and remove SIGKILL; a process
 * is only signalled once its start time proves it is still the one that was started.
 */
export const ProcessDriver = Layer.effect(
  SandboxDriver,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const root = resolve(config.dataDir, "sandboxes")
    const instanceId = instanceIdentity(config.dataDir)
    // Exit codes of the sandboxes this process started and saw end (unknown after a restart).
    const exits = new Map<SandboxId, number | null>()
    const children = new Set<number>()

    const dirOf = (id: SandboxId) => join(root, id)
    const workspaceOf = (id: SandboxId) => join(dirOf(id), "workspace")

    /** What the driver wrote when it started the sandbox: the process of a sandbox no record knows. */
    const processFile = (id: SandboxId): SandboxProcess | null => {
      try {
        const { pid, start_time } = JSON.parse(readFileSync(join(dirOf(id), "process.json"), "utf8"))
        return SandboxProcess.make({ pid, start_time })
      } catch {
        return null
      }
    }

    /** The sandbox's process group leader, when the process at that pid is still the one started. */
    const leader = (sandbox: SandboxRef) => {
      const started = sandbox.process ?? processFile(sandbox.id)
      if (started === null) return undefined
      const stat = readStat(started.pid)
      return stat && stat.startTime === started.start_time ? stat : undefined
    }

    /** Processes carrying this instance's marker, by sandbox id: also those that left their group. */
    const markedProcesses = () => {
      const found = new Map<SandboxId, Array<number>>()
      for (const pid of listPids()) {
        const environ = readEnviron(pid)
        const id = environ?.get(ID_MARKER)
        if (environ?.get(OWNER_MARKER) !== instanceId || id === undefined) continue
        found.set(id as SandboxId, [...(found.get(id as SandboxId) ?? []), pid])
      }
      return found
    }

    const kill = (sandbox: SandboxRef) =>
      Effect.gen(function*() {
        const group = leader(sandbox)
        if (group) signalGroup(group.pid, "SIGKILL")
        for (const pid of markedProcesses().get(sandbox.id) ?? []) signalProcess(pid, "SIGKILL")
        if (group === undefined) return
        // SIGKILL is delivered asynchronously: return once nothing of the group is left, bounded.
        for (let attempt = 0; attempt < 100 && groupMembers(group.pid).length > 0; attempt++) {
          yield* Effect.sleep("20 millis")
        }
      })

    const observe = (sandbox: SandboxRef) =>
      Effect.gen(function*() {
        if (sandbox.process === null) return { _tag: "Gone", exitCode: exits.get(sandbox.id) ?? null } as const
        const stat = leader(sandbox)
        if (stat && stat.state === "Z" && children.has(stat.pid)) {
          // Our own child, exited but not reaped yet: its exit code arrives with the reaping.
          for (let attempt = 0; attempt < 25 && !exits.has(sandbox.id); attempt++) yield* Effect.sleep("20 millis")
        }
        if (stat === undefined || stat.state === "Z" || stat.state === "X") {
          return { _tag: "Gone", exitCode: exits.get(sandbox.id) ?? null } as const
        }
        return stat.state === "T" || stat.state === "t" ? { _tag: "Stopped" } as const : { _tag: "Running" } as const
      }) satisfies Effect.Effect<Observation>

    const spawnSandbox = (
      id: SandboxId,
      command: ReadonlyArray<string>,
      cwd: string,
      env: Record<string, string>
    ) =>
      Effect.async<SandboxProcess, SandboxStartFailed>((resume) => {
        const log = openSync(join(dirOf(id), "sandbox.log"), "a", 0o600)
        const child = spawn(command[0], command.slice(1), { cwd, env, detached: true, stdio: ["ignore", log, log] })
        closeSync(log)
        if (child.pid === undefined) {
          child.once("error", (error) => resume(Effect.fail(new SandboxStartFailed({ reason: error.message }))))
          return
        }
        const pid = child.pid
        // Later errors (a failed signal) must not go unhandled: the exit is what counts.
        child.on("error", () => {})
        children.add(pid)
        child.once("exit", (code) => {
          exits.set(id, code)
          children.delete(pid)
        })
        child.unref()
        const stat = readStat(pid)
        const started = SandboxProcess.make({ pid, start_time: stat?.startTime ?? "" })
        writeFileSync(join(dirOf(id), "process.json"), JSON.stringify({ ...started, instance: instanceId }), { mode: 0o600 })
        resume(Effect.succeed(started))
      })

    const driver: SandboxDriverShape = {
      instanceId,
      start: ({ id, sessionKey, spec, webhookBaseUrl }) =>
        Effect.gen(function*() {
          const workspace = workspaceOf(id)
          yield* Effect.sync(() => mkdirSync(workspace, { recursive: true, mode: 0o700 }))
          const ports = yield* freePorts(exposedUrlNames.length)
          const exposedUrls = exposedUrlNames.map((name, index) =>
            ExposedUrl.make({ name, url: `http://127.0.0.1:${ports[index]}`, port: ports[index] })
          )
          const agentPort = String(ports[0])
          const substitute = (value: string) => value.replaceAll("{port}", agentPort).replaceAll("{workspace}", workspace)
          const command = spec.command.map(substitute)
          const workingDir = spec.working_dir === null ? workspace : substitute(spec.working_dir)
          const cwd = isAbsolute(workingDir) ? workingDir : join(workspace, workingDir)
          if (!existsSync(cwd)) return yield* new SandboxStartFailed({ reason: `working_dir ${cwd} does not exist` })
          const env: Record<string, string> = {
            PATH: config.sandboxPath,
            ...spec.initial_env,
            HOST: "127.0.0.1",
            PORT: agentPort,
            ...Object.fromEntries(exposedUrls.map((url) => [`${url.name}_PORT`, String(url.port)])),
            SESSION_API_KEY: Redacted.value(sessionKey),
            [ID_MARKER]: id,
            WORKSPACE_DIR: workspace,
            WEBHOOK_BASE_URL: webhookBaseUrl,
            [OWNER_MARKER]: instanceId
          }
          const started = yield* spawnSandbox(id, command, cwd, env)
          return { process: started, exposedUrls }
        }),
      observe,
      probe: (exposedUrls) => {
        const agent = exposedUrls.find((url) => url.name === "AGENT_SERVER")
        if (!agent) return Effect.succeed(false)
        return Effect.tryPromise(() => fetch(`${agent.url}/alive`, { signal: AbortSignal.timeout(1000) })).pipe(
          Effect.map((response) => response.status === 200),
          Effect.orElseSucceed(() => false)
        )
      },
      pause: (sandbox) =>
        Effect.sync(() => {
          const group = leader(sandbox)
          if (group) signalGroup(group.pid, "SIGSTOP")
        }),
      resume: (sandbox) =>
        Effect.sync(() => {
          const group = leader(sandbox)
          if (group) signalGroup(group.pid, "SIGCONT")
        }),
      stop: kill,
      remove: (sandbox) =>
        Effect.zipRight(
          kill(sandbox),
          Effect.sync(() => {
            rmSync(dirOf(sandbox.id), { recursive: true, force: true })
            exits.delete(sandbox.id)
          })
        ),
      leftovers: Effect.sync(() => {
        const ids = new Set<SandboxId>(markedProcesses().keys())
        if (existsSync(root)) {
          for (const entry of readdirSync(root, { withFileTypes: true })) {
            if (entry.isDirectory()) ids.add(entry.name as SandboxId)
          }
        }
        return Array.from(ids)
      }),
      createDirectory: (id, path) =>
        Effect.suspend(() => {
          const result = createDirectoryInside(workspaceOf(id), path)
          return isWorkspaceProblem(result) ? Effect.fail(result) : Effect.succeed(result.path)
        }),
      workspacePath: workspaceOf
    }
    return driver
  })
)
