/**
 * Internal: lenient JSON for typed answers, as the Kotlin reference parses them. A model often wraps
 * its JSON in prose ("Here is the answer: {...}. Hope it helps", "[Step 1] ... Verdict: {...}") or
 * leaves a trailing comma. The balanced `{...}`/`[...]` stretches of the text are tried in order and
 * the first that parses (trailing commas outside strings dropped) is the value; a bracketed aside that
 * is not JSON is skipped. The result is always decoded by a Schema afterwards, so leniency never lets
 * a wrong shape through. `parseLenientJsonValues` gives every such value, for a reader that must
 * refuse a text holding two different answers. Bounded: each stretch is scanned once, and at most 32
 * unbalanced openings are retried.
 */

/** The value of `text` parsed strictly, else the first balanced stretch that parses; undefined when none does. */
export const parseLenientJson = (text: string): { readonly value: unknown } | undefined => lenientValues(text).next().value ?? undefined

/** Every JSON value of `text`: itself when it is JSON, else each balanced stretch that parses, in order. */
export const parseLenientJsonValues = (text: string): ReadonlyArray<unknown> => Array.from(lenientValues(text), (parsed) => parsed.value)

/** `text` parsed strictly when it is JSON, else each balanced stretch that parses (trailing commas dropped), lazily. */
function* lenientValues(text: string): Generator<{ readonly value: unknown }, void> {
  const strict = tryParse(text)
  if (strict !== undefined) return yield strict
  for (const stretch of balancedStretches(text)) {
    const parsed = tryParse(stretch) ?? tryParse(dropTrailingCommas(stretch))
    if (parsed !== undefined) yield parsed
  }
}

const tryParse = (text: string): { readonly value: unknown } | undefined => {
  try {
    return { value: JSON.parse(text) }
  } catch {
    return undefined
  }
}

const MAX_RESTARTS = 32

/**
 * The balanced `{...}` or `[...]` stretches of `text`, outermost only, strings (and their escapes)
 * respected. An opening that never closes, or closes with the wrong bracket, is retried one character
 * later (at most `MAX_RESTARTS` times): `"[ aside {"a":1}"` still yields `{"a":1}`.
 */
function* balancedStretches(text: string): Generator<string> {
  const opening = /[[{]/g
  let restarts = 0
  let from = 0
  while (from < text.length) {
    opening.lastIndex = from
    const found = opening.exec(text)
    if (found === null) return
    const start = found.index
    const stack: Array<string> = []
    let inString = false
    let end = -1
    for (let i = start; i < text.length; i++) {
      const ch = text[i]!
      if (inString) {
        if (ch === "\\") i++
        else if (ch === "\"") inString = false
        continue
      }
      if (ch === "\"") inString = true
      else if (ch === "{") stack.push("}")
      else if (ch === "[") stack.push("]")
      else if (ch === "}" || ch === "]") {
        if (stack.pop() !== ch) break
        if (stack.length === 0) {
          end = i + 1
          break
        }
      }
    }
    if (end >= 0) {
      yield text.slice(start, end)
      from = end
    } else {
      if (++restarts > MAX_RESTARTS) return
      from = start + 1
    }
  }
}

/** Removes commas followed (after whitespace) by `}` or `]`, outside strings. */
const dropTrailingCommas = (json: string): string => {
  let out = ""
  let inString = false
  for (let i = 0; i < json.length; i++) {
    const ch = json[i]!
    if (inString) {
      out += ch
      if (ch === "\\") out += json[++i] ?? ""
      else if (ch === "\"") inString = false
      continue
    }
    if (ch === "\"") inString = true
    if (ch === ",") {
      let j = i + 1
      while (j < json.length && /\s/.test(json[j]!)) j++
      if (json[j] === "}" || json[j] === "]") continue
    }
    out += ch
  }
  return out
}
