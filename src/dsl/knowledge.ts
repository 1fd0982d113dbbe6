/**
 * Knowledge: a lazy text source a skill exposes to the model as a tool without arguments. It is loaded
 * on first use and cached for the rest of the run; each use fires `onKnowledgeUsed`.
 */
import type { MaybeEffect } from "../internal/from-maybe-effect.ts"

/** Produces the knowledge text; called at most once per run. Its Effect may require services `R`. */
export type KnowledgeLoader<R = never> = (context: { readonly signal: AbortSignal }) => MaybeEffect<string, R>

/** A named knowledge source, as declared with `skill(...).knowledge(name, description, loader)`. */
export interface KnowledgeSource {
  readonly name: string
  readonly description: string
  readonly load: KnowledgeLoader<any>
  /**
   * Load it when the run starts and put it in the skill's system prompt, instead of offering a tool
   * (for small texts, or models without tools). Default false.
   */
  readonly preload?: boolean
}
