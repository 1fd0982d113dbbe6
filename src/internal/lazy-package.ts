/**
 * A provider SDK loaded on first use, so that importing the package (whose root exports every provider)
 * loads no SDK an agent does not use: `openai`, `@anthropic-ai/sdk` and `ollama` are hundreds of modules
 * and most of a cold start. Loaded synchronously (`require`, each SDK ships CommonJS) when a provider is
 * built, so building one still fails at once, as before, when its SDK refuses the options.
 *
 * @example
 * ```ts
 * const sdk = lazyPackage<typeof import("openai")>("openai")
 * const client = new (sdk().default)({ apiKey }) // the SDK loads here, once
 * ```
 */
import { createRequire } from "node:module"

const require = createRequire(import.meta.url)

export const lazyPackage = <A>(specifier: string): (() => A) => {
  let loaded: A | undefined
  return () => (loaded ??= require(specifier) as A)
}
