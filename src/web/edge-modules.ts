/**
 * The Effect modules a streaming run loads on first use (`src/internal/lazy-effect.ts`), imported
 * statically and handed over to those loaders, so that a run streams where there is no `require`
 * (edge functions, Workers). The web entry pays their load up front; the root entry keeps loading them
 * on first use under Node.
 */
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { providePackage } from "../internal/lazy-package.ts"

/**
 * Hands Stream and Queue over to the lazy loaders (idempotent).
 *
 * @example
 * ```ts
 * provideStreamingModules() // before the first streamed run, where `require` is missing
 * ```
 */
export const provideStreamingModules = (): void => {
  providePackage("effect/Stream", Stream)
  providePackage("effect/Queue", Queue)
}
