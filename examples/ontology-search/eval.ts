/**
 * The search evaluation: 40 questions with expected slots (evals/queries.jsonl), scored for slot
 * precision, slot recall and gap accuracy (slot-scorers.ts) with effect-agent-dsl/evals.
 *
 * Run: npm run eval:search                     replays evals/search.cassette.json (no network)
 *   LIVE=1 AI_PROVIDER=... AI_MODEL=... npm run eval:search        any configured provider, not recorded
 *   RECORD=1 AI_PROVIDER=... AI_MODEL=... npm run eval:search      re-record the cassette from that provider
 *   RECORD=stand-in npm run eval:search        re-record it from the scripted stand-in (how the committed one was made)
 */
import { realpathSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { Effect, Schema } from "effect"
import type { ModelClient } from "effect-agent-dsl"
import { evaluate, formatTable, loadJsonl, scoresOf, terminalProgress } from "effect-agent-dsl/evals"
import { recordCassette, replayCassette } from "effect-agent-dsl/testing"
import type { CorrectedSlots } from "./corrections.ts"
import { search, settingsFromEnv } from "./search-agent.ts"
import { type ExpectedSlots, gapAccuracy, slotPrecision, slotRecall } from "./slot-scorers.ts"
import { standInModel } from "./stand-in-model.ts"
import { loadCatalogue } from "./store.ts"

const here = (file: string) => fileURLToPath(new URL(`./evals/${file}`, import.meta.url))
export const queriesFile = here("queries.jsonl")
export const cassetteFile = here("search.cassette.json")

/** The model for a mode: replayed (default), live, or recorded. */
export const evalModel = (mode: string | undefined, cassette = cassetteFile): { readonly client: ModelClient; readonly maxSteps: number } => {
  if (mode === "live") return settingsFromEnv()
  if (mode === "record") { const s = settingsFromEnv(); return { ...s, client: recordCassette(s.client, { cassette }) } }
  if (mode === "record-stand-in") return { client: recordCassette(standInModel(), { cassette }), maxSteps: 3 }
  // Matched on the question alone: a recorded answer stays valid when the prompt's wording changes.
  return { client: replayCassette(cassette, { match: (r) => r.messages.filter((m) => m.role === "user").map((m) => m.content) }), maxSteps: 3 }
}

/**
 * Runs the evaluation and returns its report.
 *
 * @example
 * ```ts
 * const report = await Effect.runPromise(runSearchEval(evalModel(undefined)))
 * ```
 */
export const runSearchEval = (model: { readonly client: ModelClient; readonly maxSteps: number }, options: { readonly progress?: boolean } = {}) =>
  Effect.gen(function*() {
    const catalogue = loadCatalogue()
    const dataset = yield* loadJsonl<string, ExpectedSlots>(queriesFile, { name: "ontology-search", input: Schema.String })
    const subject = (question: string) =>
      Effect.tryPromise(() => search(catalogue, model.client, question, { maxSteps: model.maxSteps })).pipe(Effect.map((r): CorrectedSlots => r.slots))
    return yield* evaluate(subject, dataset, [slotPrecision, slotRecall, gapAccuracy], {
      concurrency: 1,
      ...(options.progress === true ? { onProgress: terminalProgress() } : {})
    })
  })

// Run as a command, not imported: compared as real paths, so a path with a space, a symlinked checkout or
// Windows still matches (a `file://${process.argv[1]}` string does not, and the command would do nothing).
if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url))) {
  const mode = process.env.RECORD === "1" ? "record" : process.env.RECORD === "stand-in" ? "record-stand-in" : process.env.LIVE === "1" ? "live" : undefined
  Effect.runPromise(runSearchEval(evalModel(mode), { progress: true })).then((report) => {
    console.log(formatTable(report))
    console.log(JSON.stringify(scoresOf(report)))
  }).catch((error: unknown) => {
    console.error(error)
    process.exitCode = 2
  })
}
