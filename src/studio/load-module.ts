/**
 * Loads the user's module for the studio: JavaScript as it is; TypeScript through `tsx` (its loader
 * is registered when the module cannot be imported otherwise, which needs `tsx` installed in
 * the project, or Node's own type stripping). Its exports give the agents and composites, and may name
 * `sessions` (a `StudioSessions`), `durable` (a `DurableSource`) and `studio` (more `StudioOptions`).
 */
import { existsSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { isRecord } from "../internal/is-record.ts"

/** Why the module could not be loaded, in one line a user can act on. */
export class ModuleLoadFailed extends Error {
  readonly _tag = "ModuleLoadFailed"
}

const isTypeScript = (file: string) => /\.[cm]?tsx?$/.test(file)

/**
 * The URL of tsx's loader (its main entry, what `node --import tsx` runs) as the project in `cwd` has
 * it, read from tsx's own `exports`. Importing it registers tsx for both module systems: a `.ts` file
 * in a folder without `"type": "module"` goes through CommonJS, which `tsx/esm/api`'s `register`
 * alone does not reach; and `createRequire(...).resolve("tsx/esm/api")` picks that API's CommonJS
 * build, whose `register` fails on Node 20 ("Cannot find module .../dist/esm/api/esm/index.mjs").
 *
 * @example
 * ```ts
 * await import(tsxLoaderUrl(process.cwd()))
 * ```
 */
export const tsxLoaderUrl = (cwd: string): string => {
  const manifestPath = createRequire(resolve(cwd, "package.json")).resolve("tsx/package.json")
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as { exports?: unknown }
  const exports = manifest.exports
  const main = typeof exports === "string" ? exports : isRecord(exports) ? exports["."] : undefined
  const onImport = isRecord(main) ? main.import ?? main.default : main
  const target = isRecord(onImport) ? onImport.default : onImport
  if (typeof target !== "string") throw new Error(`${manifestPath} names no loader`)
  return pathToFileURL(join(dirname(manifestPath), target)).href
}

/**
 * A module's exports as its source names them: a TypeScript module in a folder without `"type":
 * "module"` is compiled to CommonJS by tsx, and `import` then shows only `default` (its
 * `module.exports`, marked `__esModule`); its own named exports are in there.
 *
 * @example
 * ```ts
 * esModuleExports({ default: Object.assign(Object.defineProperty({}, "__esModule", { value: true }), { calculator }) }) // { calculator }
 * ```
 */
export const esModuleExports = (namespace: Record<string, unknown>): Record<string, unknown> => {
  const inner = namespace.default
  const onlyDefault = Object.keys(namespace).every((key) => key === "default" || key === "module.exports")
  return onlyDefault && isRecord(inner) && inner.__esModule === true ? { ...inner } : namespace
}

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
    return esModuleExports(await import(url) as Record<string, unknown>)
  } catch (error) {
    const code = (error as { code?: unknown }).code
    if (!isTypeScript(path) || (code !== "ERR_UNKNOWN_FILE_EXTENSION" && code !== "ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING")) {
      throw new ModuleLoadFailed(`cannot load ${file}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  try {
    // tsx as the user's project has it, else as this package's environment has it; importing its
    // loader registers it.
    await import(tsxLoaderUrl(cwd))
  } catch {
    try {
      await import("tsx" as string)
    } catch {
      throw new ModuleLoadFailed(`${file} is TypeScript: install tsx in your project (npm i -D tsx), or run the studio on its compiled JavaScript`)
    }
  }
  try {
    return esModuleExports(await import(`${url}?studio`) as Record<string, unknown>)
  } catch (error) {
    throw new ModuleLoadFailed(`cannot load ${file}: ${error instanceof Error ? error.message : String(error)}`)
  }
}
