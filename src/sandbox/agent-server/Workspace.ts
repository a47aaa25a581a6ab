import { lstatSync, mkdirSync, realpathSync } from "node:fs"
import { isAbsolute, join, relative, sep } from "node:path"

/**
 * Directory creation confined to a workspace, shared by Hangar's process driver and the reference
 * agent server (so Node built-ins only). A path is refused when it is absolute, when it resolves
 * outside the workspace, or when a symbolic link on its way leads outside. Components are created
 * one at a time and each existing one is checked, so no link is ever followed out.
 */

export type WorkspacePathProblem =
  | { readonly _tag: "Outside"; readonly reason: string }
  | { readonly _tag: "NotADirectory"; readonly path: string }

export type CreateDirectoryResult =
  | { readonly _tag: "Created"; readonly path: string }
  | WorkspacePathProblem

export const isWorkspaceProblem = <A>(value: A | WorkspacePathProblem): value is WorkspacePathProblem =>
  typeof value === "object" && value !== null && "_tag" in value && (value._tag === "Outside" || value._tag === "NotADirectory")

const outside = (reason: string): WorkspacePathProblem => ({ _tag: "Outside", reason })

/**
 * The path's components relative to the workspace, resolved lexically: `a/./b/../c` → `["a", "c"]`.
 * Refuses absolute paths and any path that climbs out; an empty list is the workspace itself.
 */
export const workspaceComponents = (path: string): ReadonlyArray<string> | WorkspacePathProblem => {
  if (path.includes("\u0000")) return outside("the path contains a NUL character")
  if (isAbsolute(path) || /^[A-Za-z]:[\\/]/.test(path)) return outside("absolute paths are not allowed")
  const components: Array<string> = []
  for (const part of path.split(/[\\/]+/)) {
    if (part === "" || part === ".") continue
    if (part === "..") {
      if (components.length === 0) return outside("the path leads outside the workspace")
      components.pop()
    } else {
      components.push(part)
    }
  }
  return components
}

const inside = (root: string, candidate: string) => {
  const rel = relative(root, candidate)
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel))
}

/** Creates `path` (and its missing parents) inside `workspace`; an existing directory is fine. */
export const createDirectoryInside = (workspace: string, path: string): CreateDirectoryResult => {
  const components = workspaceComponents(path)
  if (isWorkspaceProblem(components)) return components
  const root = realpathSync(workspace)
  let current = root
  for (const component of components) {
    const next = join(current, component)
    let stat
    try {
      stat = lstatSync(next)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error
      mkdirSync(next)
      current = next
      continue
    }
    if (stat.isSymbolicLink()) {
      let target: string
      try {
        target = realpathSync(next)
      } catch {
        return outside("the path goes through a broken symbolic link")
      }
      if (!inside(root, target)) return outside("the path goes through a symbolic link that leads outside the workspace")
      if (!lstatSync(target).isDirectory()) return { _tag: "NotADirectory", path: relative(root, next) }
      current = target
    } else if (stat.isDirectory()) {
      current = next
    } else {
      return { _tag: "NotADirectory", path: relative(root, next) }
    }
  }
  return { _tag: "Created", path: relative(root, current) }
}
