/**
 * Tool pre-selection: ranks tools for an input so that only the most relevant are offered to the
 * model. Pure: it reads names, descriptions and tags, and never runs a tool.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { AnyTool } from "./tool.ts"
import { describeCause } from "../internal/describe-cause.ts"
import { fromMaybeEffect, type MaybeEffect } from "../internal/from-maybe-effect.ts"

/** One ranked candidate. `provenance` says whether the scorer ranked it or the fallback did. */
export interface PickedTool<T extends AnyTool = AnyTool> {
  readonly tool: T
  /** In [0, 1]. */
  readonly score: number
  readonly reason: string
  readonly provenance: "scorer" | "fallback"
}

/** A score in [0, 1] (out-of-range values are clamped) and optionally why. */
export type ToolScore = number | { readonly score: number; readonly reason: string }

/** Scores one tool for an input; may be async or an Effect (an embedding lookup, say). */
export type ToolScorer<R = never> = (input: string, tool: AnyTool) => MaybeEffect<ToolScore, R>

/** Options of {@link pickTools}. */
export interface PickToolsOptions<R = never> {
  /** At most this many candidates. Default 3. */
  readonly maxCandidates?: number
  /** Candidates scoring below are dropped. Default 0.05. */
  readonly minScore?: number
  /** Offer tools marked `safe: false`. Default false. */
  readonly allowUnsafe?: boolean
  /** Default: {@link keywordScorer}. */
  readonly scorer?: ToolScorer<R>
  /** When scoring takes longer, fall back to registration order. Default: no limit. */
  readonly timeoutMs?: number
  /** Receives one line per decision, for debugging. */
  readonly debug?: (line: string) => void
}

const stopWords = new Set([
  "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "for", "from", "how", "i", "in", "is", "it", "me", "my",
  "of", "on", "or", "please", "the", "this", "to", "what", "with", "you", "your"
])

/**
 * Lower-case word tokens without stop words or bare numbers; splits snake_case, kebab-case and camelCase.
 * Words are runs of Unicode letters and digits in any script, compared without accents (NFD, combining
 * marks removed): "météo", "meteo" and "Météo" are one word, "погода" is a word. Scripts written without
 * spaces (Chinese, Japanese) come out as one word per run.
 */
const tokens = (text: string): ReadonlyArray<string> =>
  text
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, "$1 $2")
    .normalize("NFD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t.length > 1 && !stopWords.has(t) && !/^\p{N}+$/u.test(t))

const similar = (a: string, b: string): boolean =>
  a === b || (a.length >= 4 && b.length >= 4 && (a.startsWith(b.slice(0, 4)) && b.startsWith(a.slice(0, 4))))

/** A tool's words by field, tokenised once per tool (tools are immutable). */
interface ToolKeywords {
  readonly name: ReadonlyArray<string>
  readonly tags: ReadonlyArray<string>
  readonly description: ReadonlyArray<string>
}

const keywordCache = new WeakMap<AnyTool, ToolKeywords>()

const keywordsOf = (tool: AnyTool): ToolKeywords => {
  let cached = keywordCache.get(tool)
  if (cached === undefined) {
    cached = { name: tokens(tool.name), tags: tool.tags.flatMap(tokens), description: tokens(tool.description ?? "") }
    keywordCache.set(tool, cached)
  }
  return cached
}

/** The keyword score of `tool` for the input's distinct words (see {@link keywordScorer}). */
const keywordScore = (words: ReadonlyArray<string>, tool: AnyTool): { readonly score: number; readonly reason: string } => {
  if (words.length === 0) return { score: 0, reason: "no keywords in the input" }
  const keywords = keywordsOf(tool)
  const fields = [
    { label: "name", weight: 3, words: keywords.name },
    { label: "tags", weight: 2, words: keywords.tags },
    { label: "description", weight: 1, words: keywords.description }
  ]
  let total = 0
  const matched = new Map<string, Array<string>>()
  for (const word of words) {
    const field = fields.find((f) => f.words.some((w) => similar(w, word)))
    if (field === undefined) continue
    total += field.weight
    matched.set(field.label, [...(matched.get(field.label) ?? []), word])
  }
  const score = total / (words.length * 3)
  const reason = matched.size === 0 ? "no keyword matched" : [...matched].map(([label, ws]) => `${label}: ${ws.join(", ")}`).join("; ")
  return { score, reason }
}

/** The input's distinct keywords, in order of first appearance. */
const inputWords = (input: string): ReadonlyArray<string> => [...new Set(tokens(input))]

/**
 * The default scorer: the share of the input's words found in the tool's name (weight 3), tags (2)
 * or description (1), divided by 3 per input word; words of 4+ letters sharing their first four
 * letters count as the same word ("multiplying" ~ "multiply"). Each tool's words are tokenised once;
 * `pickTools` with this scorer tokenises the input once per call and scores without an Effect per tool.
 *
 * @example
 * ```ts
 * keywordScorer("convert celsius to fahrenheit", convertTool) // { score: 0.67, reason: "name: convert; description: celsius, fahrenheit" }
 * ```
 */
export const keywordScorer: ToolScorer = (input, tool) => keywordScore(inputWords(input), tool)

/** Where each keyword of a tool list occurs: by exact word, and by 4-letter prefix for words of 4+ letters. */
interface KeywordIndex {
  /** `=word` or `^pref` → the tools (by position in the list) and the best field (0 name, 1 tags, 2 description). */
  readonly postings: ReadonlyMap<string, ReadonlyArray<{ readonly tool: number; readonly field: number }>>
}

const fieldLabels = ["name", "tags", "description"] as const
const fieldWeights = [3, 2, 1] as const
const indexes = new WeakMap<ReadonlyArray<AnyTool>, KeywordIndex>()

/** The index of a tool list, built once per list (a skill's tools are one list for the agent's life). */
const indexOf = (tools: ReadonlyArray<AnyTool>): KeywordIndex => {
  const cached = indexes.get(tools)
  if (cached !== undefined) return cached
  const postings = new Map<string, Array<{ tool: number; field: number }>>()
  const add = (key: string, tool: number, field: number) => {
    const list = postings.get(key)
    if (list === undefined) postings.set(key, [{ tool, field }])
    else if (list[list.length - 1]!.tool !== tool) list.push({ tool, field })
    // Fields are added name, tags, description: the first posting of a tool under a key has its best field.
  }
  tools.forEach((tool, i) => {
    const keywords = keywordsOf(tool)
    ;[keywords.name, keywords.tags, keywords.description].forEach((words, field) => {
      for (const word of words) {
        add(`=${word}`, i, field)
        if (word.length >= 4) add(`^${word.slice(0, 4)}`, i, field)
      }
    })
  })
  const index = { postings }
  indexes.set(tools, index)
  return index
}

/**
 * The keyword ranking through the index: only tools sharing a word with the input are scored, with the
 * same score and reason as `keywordScore` (a word counts for the first field, name → tags →
 * description, holding a similar word). Used when tools scoring 0 are dropped anyway (`minScore > 0`).
 */
const rankByIndex = <T extends AnyTool>(
  input: string,
  tools: ReadonlyArray<T>,
  eligible: (tool: T) => boolean,
  minScore: number,
  maxCandidates: number
): ReadonlyArray<PickedTool<T>> => {
  const words = inputWords(input)
  if (words.length === 0) return []
  const { postings } = indexOf(tools)
  // Per tool: the field each input word matched in (words in input order), or none.
  const fieldsByTool = new Map<number, Array<number | undefined>>()
  words.forEach((word, w) => {
    const best = new Map<number, number>()
    for (const key of word.length >= 4 ? [`=${word}`, `^${word.slice(0, 4)}`] : [`=${word}`]) {
      for (const { tool, field } of postings.get(key) ?? []) {
        const known = best.get(tool)
        if (known === undefined || field < known) best.set(tool, field)
      }
    }
    for (const [tool, field] of best) {
      let fields = fieldsByTool.get(tool)
      if (fields === undefined) fieldsByTool.set(tool, fields = new Array(words.length))
      fields[w] = field
    }
  })
  // Scores first; reasons only for the tools kept.
  const scored: Array<{ readonly index: number; readonly score: number; readonly fields: ReadonlyArray<number | undefined> }> = []
  for (const [index, fields] of fieldsByTool) {
    if (!eligible(tools[index]!)) continue
    let total = 0
    for (const field of fields) if (field !== undefined) total += fieldWeights[field]!
    const score = clamp(total / (words.length * 3))
    if (score >= minScore) scored.push({ index, score, fields })
  }
  return scored.sort((x, y) => y.score - x.score || x.index - y.index).slice(0, maxCandidates).map(({ index, score, fields }) => {
    const matched = new Map<string, Array<string>>()
    fields.forEach((field, w) => {
      if (field === undefined) return
      const label = fieldLabels[field]!
      matched.set(label, [...(matched.get(label) ?? []), words[w]!])
    })
    const reason = [...matched].map(([label, ws]) => `${label}: ${ws.join(", ")}`).join("; ")
    return { tool: tools[index]!, score, reason, provenance: "scorer" as const }
  })
}

const clamp = (n: number): number => (Number.isFinite(n) ? Math.min(1, Math.max(0, n)) : 0)

/**
 * Ranks `tools` for `input`: at most `maxCandidates`, scores in [0, 1] sorted descending (ties keep
 * registration order), unsafe tools left out unless `allowUnsafe`. When the scorer fails or exceeds
 * `timeoutMs`, the first eligible tools in registration order are returned with provenance `fallback`.
 *
 * @example
 * ```ts
 * const ranked = await Effect.runPromise(pickTools("what is 3 plus 5", [add, multiply, deleteAll]))
 * ranked.map((p) => p.tool.name) // ["add"]
 * ```
 */
export const pickTools = <T extends AnyTool, R = never>(
  input: string,
  tools: ReadonlyArray<T>,
  options: PickToolsOptions<R> = {}
): Effect.Effect<ReadonlyArray<PickedTool<T>>, never, R> => {
  const maxCandidates = Math.max(0, Math.floor(options.maxCandidates ?? 3))
  const minScore = options.minScore ?? 0.05
  const scorer = options.scorer ?? keywordScorer
  const debug = options.debug ?? (() => {})
  // The default scorer without debug output, dropping tools that score 0: rank through the tool list's index.
  if (scorer === keywordScorer && options.debug === undefined && minScore > 0 && options.timeoutMs === undefined) {
    return Effect.sync(() => rankByIndex(input, tools, (t) => options.allowUnsafe === true || t.safe, minScore, maxCandidates))
  }
  const eligible = tools.filter((t) => options.allowUnsafe === true || t.safe)
  for (const t of tools) if (!eligible.includes(t)) debug(`${t.name}: excluded (unsafe)`)

  // The default scorer is pure and synchronous: score every tool in one pass, the input tokenised once.
  const scored = scorer === keywordScorer
    ? Effect.sync(() => {
      const words = inputWords(input)
      return eligible.map((tool) => {
        const { score, reason } = keywordScore(words, tool)
        return { tool, score: clamp(score), reason, provenance: "scorer" as const }
      })
    })
    : Effect.forEach(eligible, (tool) =>
      fromMaybeEffect(() => scorer(input, tool)).pipe(
        Effect.map((result) => {
          const { score, reason } = typeof result === "number" ? { score: result, reason: "scorer" } : result
          return { tool, score: clamp(score), reason, provenance: "scorer" as const }
        })
      ))
  const ranked = scored.pipe(
    Effect.map((all) => {
      const kept = all.filter((p) => p.score >= minScore)
      for (const p of all) debug(`${p.tool.name}: ${p.score.toFixed(3)} (${p.reason})${p.score < minScore ? " below minScore" : ""}`)
      return kept
        .map((p, index) => ({ p, index }))
        .sort((x, y) => y.p.score - x.p.score || x.index - y.index)
        .slice(0, maxCandidates)
        .map(({ p }) => p)
    })
  )
  const fallback = (why: string) =>
    Effect.sync(() => {
      debug(`fallback to registration order: ${why}`)
      return eligible.slice(0, maxCandidates).map((tool): PickedTool<T> => ({
        tool,
        score: 0,
        reason: `${why}; registration order`,
        provenance: "fallback"
      }))
    })
  const bounded = options.timeoutMs === undefined
    ? ranked
    : ranked.pipe(
      Effect.timeoutOrElse({
        duration: Duration.millis(options.timeoutMs),
        orElse: () => fallback(`scoring took longer than ${options.timeoutMs} ms`)
      })
    )
  return bounded.pipe(Effect.catch((error) => fallback(`the scorer failed: ${describeCause(error)}`)))
}
