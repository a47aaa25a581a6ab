import type * as DateTime from "effect/DateTime"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { SandboxSpec, type SandboxSpecId } from "../domain/Sandbox.js"

/**
 * The package root, from this module's place in it: `src/sandbox/` when the TypeScript sources
 * run (tests), `dist/sandbox/` when the compiled server runs. Either way the agent server that
 * is run is the compiled one (`npm run build`, which `npm test` and `npm start` do first).
 */
const packageRoot = fileURLToPath(new URL("../../", import.meta.url))

export const agentServerEntry = join(packageRoot, "dist", "sandbox", "agent-server", "main.js")

export const BUILTIN_SPEC_ID = "reference-agent-server" as SandboxSpecId

/** The preset used when `HANGAR_SANDBOX_SPECS` is unset: the reference agent server on this Node. */
export const builtinSandboxSpec = (createdAt: DateTime.Utc) =>
  SandboxSpec.make({
    id: BUILTIN_SPEC_ID,
    command: [process.execPath, agentServerEntry],
    initial_env: {},
    working_dir: null,
    created_at: createdAt
  })
