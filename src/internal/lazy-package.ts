/**
 * A provider SDK loaded on first use, so that importing the package (whose root exports every provider)
 * loads no SDK an agent does not use: `openai`, `@anthropic-ai/sdk` and `ollama` are hundreds of modules
 * and most of a cold start. Loaded synchronously (`require`, each SDK ships CommonJS) when a provider is
 * built, so building one still fails at once, as before, when its SDK refuses the options.
 *
 * Nothing here imports a `node:` module when the package loads (edge runtimes have none): `require`
 * is made on the first load, through `process.getBuiltinModule` (Node >= 20.16). Where
 * there is no `require` (a Worker, an edge function), a module must have been handed over with
 * {@link providePackage} beforehand; `effect-agent-dsl/web` does so for the Effect modules a streaming
 * run needs.
 *
 * @example
 * ```ts
 * const sdk = lazyPackage<typeof import("openai")>("openai")
 * const client = new (sdk().default)({ apiKey }) // the SDK loads here, once
 * ```
 */

type Require = (specifier: string) => unknown

const provided = new Map<string, unknown>()
let nodeRequire: Require | undefined

const requireOf = (specifier: string): Require => {
  if (nodeRequire !== undefined) return nodeRequire
  const getBuiltinModule = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule
  if (typeof getBuiltinModule !== "function") {
    throw new Error(`effect-agent-dsl: "${specifier}" is loaded on first use, and this runtime has no require: import from "effect-agent-dsl/web", which provides the modules a streaming run needs`)
  }
  const { createRequire } = getBuiltinModule("node:module") as typeof import("node:module")
  return (nodeRequire = createRequire(import.meta.url) as Require)
}

/**
 * Hands over a module already imported, so that `lazyPackage(specifier)` gives it without `require`
 * (the web entry provides Effect's Stream and Queue this way).
 *
 * @example
 * ```ts
 * import * as Stream from "effect/Stream"
 * providePackage("effect/Stream", Stream)
 * ```
 */
export const providePackage = (specifier: string, module: unknown): void => {
  if (!provided.has(specifier)) provided.set(specifier, module)
}

/** `@scope/name/sub/path` → `@scope/name`; `name/sub` → `name`. */
const packageOf = (specifier: string): string =>
  specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/")

/** Whether `error` says that `specifier`'s own package is missing (not one of its imports). */
const isMissing = (error: unknown, specifier: string): boolean =>
  typeof error === "object" && error !== null && (error as { code?: unknown }).code === "MODULE_NOT_FOUND" &&
  String((error as { message?: unknown }).message).includes(`'${specifier}'`)

const load = (specifier: string): unknown => {
  if (provided.has(specifier)) return provided.get(specifier)
  try {
    return requireOf(specifier)(specifier)
  } catch (error) {
    if (!isMissing(error, specifier)) throw error
    const name = packageOf(specifier)
    // The provider SDKs are optional peer dependencies: installed by the users of that provider only.
    throw new Error(`the package "${name}" is not installed; it is needed here and is an optional peer dependency of effect-agent-dsl: npm install ${name}`)
  }
}

export const lazyPackage = <A>(specifier: string): (() => A) => {
  let loaded: A | undefined
  return () => (loaded ??= load(specifier) as A)
}
