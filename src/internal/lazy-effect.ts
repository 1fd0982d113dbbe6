/**
 * Internal: the Effect modules that only some features need, loaded on their first use rather than
 * with the package (cold start, #20): Stream and Queue (with Channel, Sink, PubSub: ~600 KB) for
 * streaming runs, Config for `fromEnv` and the `…LayerConfig` layers, FileSystem for `fileKnowledge`,
 * SchemaRepresentation for `jsonSchemaTool`, OpenAI's structured-output rules for strict tools.
 * `require` of an ES module (Node >= 20.19) gives the very instance `import` gives; Effect is ESM
 * only, so there is one copy. One loader per module, shared by every file that needs it.
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
export const effectSchemaRepresentation = lazyPackage<typeof import("effect/SchemaRepresentation")>("effect/SchemaRepresentation")
export const effectOpenAiStructuredOutput = lazyPackage<typeof import("effect/ai/OpenAiStructuredOutput")>("effect/ai/OpenAiStructuredOutput")
