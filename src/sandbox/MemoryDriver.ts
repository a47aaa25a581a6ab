import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { AppConfig } from "../AppConfig.js"
import { ExposedUrl, exposedUrlNames, type SandboxId } from "../domain/Sandbox.js"
import { isWorkspaceProblem, workspaceComponents } from "./agent-server/Workspace.js"
import { instanceIdentity, SandboxDriver, type SandboxDriverShape } from "./SandboxDriver.js"

interface FakeSandbox {
  state: "running" | "stopped"
  readonly directories: Set<string>
}

/**
 * Sandboxes that exist only in this process's memory (`HANGAR_SANDBOX_DRIVER=memory`, tests): they
 * start at once, answer every probe while running, and vanish with the process, so after a
 * restart the reconciliation finds them gone, as it would find real ones that died.
 */
export const MemoryDriver = Layer.effect(
  SandboxDriver,
  Effect.map(AppConfig, (config): SandboxDriverShape => {
    const sandboxes = new Map<SandboxId, FakeSandbox>()
    // Ports nobody listens on, distinct within the process, like a real driver's.
    let nextPort = 20_000

    const set = (id: SandboxId, state: FakeSandbox["state"]) =>
      Effect.sync(() => {
        const sandbox = sandboxes.get(id)
        if (sandbox) sandbox.state = state
      })

    return {
      instanceId: instanceIdentity(config.dataDir),
      start: ({ id }) =>
        Effect.sync(() => {
          sandboxes.set(id, { state: "running", directories: new Set() })
          const exposedUrls = exposedUrlNames.map((name) => {
            const port = nextPort++
            return ExposedUrl.make({ name, url: `http://127.0.0.1:${port}`, port })
          })
          return { process: null, exposedUrls }
        }),
      observe: ({ id }) =>
        Effect.sync(() => {
          const sandbox = sandboxes.get(id)
          if (!sandbox) return { _tag: "Gone", exitCode: null } as const
          return sandbox.state === "running" ? { _tag: "Running" } as const : { _tag: "Stopped" } as const
        }),
      probe: () => Effect.succeed(true),
      pause: ({ id }) => set(id, "stopped"),
      resume: ({ id }) => set(id, "running"),
      stop: ({ id }) => Effect.sync(() => void sandboxes.delete(id)),
      remove: ({ id }) => Effect.sync(() => void sandboxes.delete(id)),
      leftovers: Effect.sync(() => Array.from(sandboxes.keys())),
      createDirectory: (id, path) =>
        Effect.suspend(() => {
          const components = workspaceComponents(path)
          if (isWorkspaceProblem(components)) return Effect.fail(components)
          const relative = components.join("/")
          sandboxes.get(id)?.directories.add(relative)
          return Effect.succeed(relative)
        }),
      workspacePath: (id) => `/sandboxes/${id}/workspace`
    }
  })
)
