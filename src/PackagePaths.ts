import { existsSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

/** The directory holding Hangar's package.json, whether this runs from `dist/` or from `src/`. */
export const packageRoot: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, "package.json"))) {
    const parent = dirname(dir)
    if (parent === dir) throw new Error("Hangar's package.json not found above " + fileURLToPath(import.meta.url))
    dir = parent
  }
  return dir
})()

/**
 * A program Hangar runs as a separate process, by its path under `dist/` (`npm run build` makes it;
 * tests that import the TypeScript sources still run the compiled program).
 */
export const compiledProgram = (pathInDist: string): string => join(packageRoot, "dist", pathInDist)
