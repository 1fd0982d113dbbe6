/**
 * A knowledge loader that reads a text file through Effect's platform `FileSystem` service. It
 * requires the service rather than providing Node's, so the agent's type says so and tests can
 * provide an in-memory file system; Node's is `NodeFileSystem.layer` from
 * `@effect/platform-node-shared`.
 */
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import type { KnowledgeLoader } from "../dsl/knowledge.ts"
import { effectFileSystem as fileSystem } from "../internal/lazy-effect.ts"

/**
 * A loader that reads a UTF-8 text file through the `FileSystem` service; an agent whose skill uses it
 * requires `FileSystem` until it is provided.
 *
 * @example
 * ```ts
 * import { NodeFileSystem } from "@effect/platform-node-shared"
 * const support = agent("support").model(model)
 *   .skills(() => [skill("faq", "Answer product questions").knowledge("faq", "The product FAQ", fileKnowledge("docs/faq.md"))])
 *   .provide(NodeFileSystem.layer)
 * ```
 */
export const fileKnowledge = (path: string): KnowledgeLoader<FileSystem.FileSystem> => () =>
  Effect.gen(function*() {
    const fs = yield* fileSystem().FileSystem
    return yield* fs.readFileString(path)
  })
