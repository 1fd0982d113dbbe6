/**
 * Loads the user's module for the studio: JavaScript as it is; TypeScript through `tsx` (its ESM
 * loader is registered when the module cannot be imported otherwise, which needs `tsx` installed in
 * the project, or Node's own type stripping). Its exports give the agents and composites, and may name
 * `sessions` (a `StudioSessions`), `durable` (a `DurableSource`) and `studio` (more `StudioOptions`).
 */
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { resolve } from "node:path"
import { pathToFileURL } from "node:url"

/** Why the module could not be loaded, in one line a user can act on. */
export class ModuleLoadFailed extends Error {
  readonly _tag = "ModuleLoadFailed"
}

const isTypeScript = (file: string) => /\.[cm]?tsx?$/.test(file)

/**
 * The exports of `file` (relative to `cwd`).
 *
 * @example
 * ```ts
 * const exports = await loadModule("examples/studio.ts")
 * ```
 */
export const loadModule = async (file: string, cwd: string = process.cwd()): Promise<Record<string, unknown>> => {
  const path = resolve(cwd, file)
  if (!existsSync(path)) throw new ModuleLoadFailed(`no such file: ${path}`)
  const url = pathToFileURL(path).href
  try {
    return await import(url) as Record<string, unknown>
  } catch (error) {
    const code = (error as { code?: unknown }).code
    if (!isTypeScript(path) || (code !== "ERR_UNKNOWN_FILE_EXTENSION" && code !== "ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING")) {
      throw new ModuleLoadFailed(`cannot load ${file}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  let register: (() => unknown) | undefined
  try {
    // tsx as the user's project has it, else as this package's environment has it.
    const fromProject = createRequire(resolve(cwd, "package.json")).resolve("tsx/esm/api")
    register = ((await import(pathToFileURL(fromProject).href)) as { register: () => unknown }).register
  } catch {
    try {
      register = ((await import("tsx/esm/api" as string)) as { register: () => unknown }).register
    } catch {
      throw new ModuleLoadFailed(`${file} is TypeScript: install tsx in your project (npm i -D tsx), or run the studio on its compiled JavaScript`)
    }
  }
  register()
  try {
    return await import(`${url}?studio`) as Record<string, unknown>
  } catch (error) {
    throw new ModuleLoadFailed(`cannot load ${file}: ${error instanceof Error ? error.message : String(error)}`)
  }
}
