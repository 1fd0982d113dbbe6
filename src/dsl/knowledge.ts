/**
 * Knowledge: a lazy text source a skill exposes to the model as a tool without arguments. It is loaded
 * on first use and cached for the rest of the run; each use fires `onKnowledgeUsed`.
 */
import * as NodeFileSystem from "@effect/platform-node-shared/NodeFileSystem"
import { Effect, FileSystem } from "effect"
import type { MaybeEffect } from "../internal/from-maybe-effect.ts"

/** Produces the knowledge text; called at most once per run. */
export type KnowledgeLoader = (context: { readonly signal: AbortSignal }) => MaybeEffect<string>

/** A named knowledge source, as declared with `skill(...).knowledge(name, description, loader)`. */
export interface KnowledgeSource {
  readonly name: string
  readonly description: string
  readonly load: KnowledgeLoader
}

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
