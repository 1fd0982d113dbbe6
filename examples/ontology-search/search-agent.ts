/**
 * The ontology slot-filling search agent (seed 000): the system prompt is generated at startup from
 * the raw SHACL Turtle; the model fills `submit_slots` (the typed answer, renamed with `outputToolName`
 * and forced with `.toolChoice`) with the five investigation tools wired in; then the corrections run, the slots compile to SPARQL, and the data graph answers.
 */
import { agent, fromEnv, type ModelClient, outputToolName } from "effect-agent-dsl"
import { compileQuery, type Hit, runQuery } from "./compile.ts"
import { type CorrectedSlots, correctSlots } from "./corrections.ts"
import { type ForcePolicy, SUBMIT_SLOTS, submitSlotsChoice } from "./forced-choice.ts"
import { investigationTools } from "./investigation-tools.ts"
import { Submission } from "./slots.ts"
import { type Catalogue, shapesTurtle } from "./store.ts"

/**
 * The system prompt, generated from the shapes as written.
 *
 * @example
 * ```ts
 * systemPrompt(shapesTurtle).includes("sh:in") // true
 * ```
 */
export const systemPrompt = (turtle: string): string => `You turn a natural-language search for data assets into slots. You never write SPARQL.
The catalogue is described by these SHACL shapes (Turtle). Each domain is the rdfs:label of a sh:targetClass.
Filters and ranges are keyed by the leaf local name of a sh:path (e.g. roadTypes, country, license).
- sh:in lists the only allowed values: map synonyms and spellings to them (e.g. "highway" → "motorway", "Germany" → "DE").
- sh:pattern gives a value's format; xsd:integer and xsd:decimal properties take ranges { min, max }.
- sh:description says what a property means; sh:class marks a cross-domain reference (at most one in references).
Put every term you cannot map into gaps with a reason. Call ${SUBMIT_SLOTS} once with your answer.
Tools discover_domains, discover_properties, discover_values, discover_connections and investigate_schema
(SELECT on the schema graph) exist for edge cases; the shapes below are usually enough.

\`\`\`turtle
${turtle.trim()}
\`\`\``

/** The knobs of seed 000, from the environment. */
export interface SearchSettings {
  readonly client: ModelClient
  readonly label: string
  readonly maxSteps: number
  readonly temperature: number
}

/**
 * Reads `AI_PROVIDER`, `AI_MODEL`, `LLM_TEMPERATURE` (default 0 here: slot filling is extraction),
 * `LLM_THINKING_BUDGET` (0 or unset: no thinking block) and `LLM_MAX_AGENT_STEPS` (default 3) through `fromEnv`.
 *
 * @example
 * ```ts
 * const settings = settingsFromEnv({ AI_PROVIDER: "ollama", AI_MODEL: "qwen2.5:7b" })
 * settings.maxSteps // 3
 * ```
 */
export const settingsFromEnv = (env: Record<string, string | undefined> = process.env): SearchSettings => {
  // LLM_THINKING_BUDGET=0 is seed 000's default and means no thinking block; `fromEnv` reads any value
  // as a budget, and Anthropic's is at least 1024, so 0 is left out there (Gemini takes 0 as "off").
  const noThinking = env.AI_PROVIDER === "anthropic" && env.LLM_THINKING_BUDGET?.trim() === "0"
  const resolved = fromEnv({
    ...env,
    LLM_TEMPERATURE: env.LLM_TEMPERATURE ?? "0",
    LLM_MAX_AGENT_STEPS: env.LLM_MAX_AGENT_STEPS ?? "3",
    LLM_THINKING_BUDGET: noThinking ? undefined : env.LLM_THINKING_BUDGET
  })
  return {
    client: resolved.client,
    label: `${resolved.provider} ${resolved.model}`,
    maxSteps: resolved.budget.maxTurns ?? 3,
    temperature: resolved.temperature ?? 0
  }
}

/**
 * The agent, bound to a catalogue and a model.
 *
 * @example
 * ```ts
 * const searcher = searchAgent(loadCatalogue(), { client, maxSteps: 3 })
 * const submission = await searcher.run("motorway maps in Germany")
 * ```
 */
export const searchAgent = (catalogue: Catalogue, options: { readonly client: ModelClient; readonly maxSteps?: number; readonly force?: ForcePolicy }) => {
  const maxSteps = options.maxSteps ?? 3
  return agent("ontology-search", { output: outputToolName(Submission, SUBMIT_SLOTS) })
    .prompt(systemPrompt(shapesTurtle))
    .model(options.client)
    .budget({ maxTurns: maxSteps })
    .tools(investigationTools(catalogue.store, catalogue.vocabulary))
    .toolChoice(submitSlotsChoice(options.force))
}

/** What a search answers: the corrected slots (interpretation, corrections, gaps, confidence), the query and the hits. */
export interface SearchResult {
  readonly slots: CorrectedSlots
  readonly sparql: string
  readonly total: number
  readonly hits: ReadonlyArray<Hit>
}

/**
 * The whole search: model → corrections → SPARQL → results (the first `limit` hits, and the total).
 *
 * @example
 * ```ts
 * const result = await search(loadCatalogue(), client, "motoway maps")
 * result.slots.corrections // [{ slot: "filters.roadTypes", from: "motoway", to: "motorway", match: "fuzzy" }, ...]
 * ```
 */
export const search = async (
  catalogue: Catalogue,
  client: ModelClient,
  question: string,
  options: { readonly maxSteps?: number; readonly force?: ForcePolicy; readonly limit?: number } = {}
): Promise<SearchResult> => {
  const submission = await searchAgent(catalogue, { client, ...options }).run(question)
  return answer(catalogue, submission, options.limit)
}

/**
 * The part after the model: corrections, compilation and the query on the data graph.
 *
 * @example
 * ```ts
 * answer(catalogue, { slots: { domains: ["hdmap"], filters: {}, ranges: {} }, interpretation: "all maps", gaps: [] }).total // 1500
 * ```
 */
export const answer = (catalogue: Catalogue, submission: Submission, limit = 20): SearchResult => {
  const slots = correctSlots(catalogue.vocabulary, submission)
  const query = compileQuery(catalogue.vocabulary, slots)
  const hits = runQuery(catalogue.store, query)
  return { slots, sparql: query.sparql, total: hits.length, hits: hits.slice(0, limit) }
}

