/**
 * Internal: the Effect modules that only some features need, loaded on their first use rather than
 * with the package (cold start, #20): Stream and Queue (with Channel, Sink, PubSub: ~600 KB) for
 * streaming runs, Config for `fromEnv` and the `…LayerConfig` layers, FileSystem for `fileKnowledge`.
 * One loader per module, shared by every file that needs it.
 *
 * Under plain Node (>= 20.19) `require` of an ES module gives the very instance `import` gives. Some
 * loaders give `require` a copy of its own (tsx transpiles the required file again), so only modules
 * whose values still work with another copy of Effect belong here: Effect 4's values meet through
 * string keys (an Effect, a Stream, a service or Reference key), which the copies share. Modules that
 * build Schemas do not (a Schema from one copy is refused by another copy's parser): the JSON Schema
 * importer (`jsonSchemaTool`) and the strict-schema codec (strict tools) are imported statically.
 * `test/package/loader-identity.test.ts` runs every lazily loaded feature under tsx.
 *
 * @example
 * ```ts
 * const events = effectStream().fromIterable([1, 2, 3]) // effect/Stream loads here, once
 * ```
 */
import { lazyPackage } from "./lazy-package.ts"

export const effectStream = lazyPackage<typeof import("effect/Stream")>("effect/Stream")
export const effectQueue = lazyPackage<typeof import("effect/Queue")>("effect/Queue")
export const effectConfig = lazyPackage<typeof import("effect/Config")>("effect/Config")
export const effectConfigProvider = lazyPackage<typeof import("effect/ConfigProvider")>("effect/ConfigProvider")
export const effectFileSystem = lazyPackage<typeof import("effect/FileSystem")>("effect/FileSystem")
