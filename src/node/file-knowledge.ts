/**
 * A knowledge loader that reads a text file through Effect's platform `FileSystem`.
 */
import * as NodeFileSystem from "@effect/platform-node-shared/NodeFileSystem"
import { Effect, FileSystem } from "effect"
import type { KnowledgeLoader } from "../dsl/knowledge.ts"

/**
 * A loader that reads a UTF-8 text file through Effect's `FileSystem` (Node implementation).
 *
 * @example
 * ```ts
 * skill("support", "Answer product questions").knowledge("faq", "The product FAQ", fileKnowledge("docs/faq.md"))
 * ```
 */
export const fileKnowledge = (path: string): KnowledgeLoader => () =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    return yield* fs.readFileString(path)
  }).pipe(Effect.provide(NodeFileSystem.layer))
