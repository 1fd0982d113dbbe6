/**
 * Internal: lenient JSON for typed answers, as the Kotlin reference parses them. A model often wraps
 * its JSON in prose ("Here is the answer: {...}. Hope it helps") or leaves a trailing comma. The first
 * balanced JSON object or array in the text is extracted and trailing commas (outside strings) are
 * dropped; the result is always decoded by the output Schema afterwards, so leniency never lets a
 * wrong shape through. Bounded: one linear scan, no backtracking.
 */

/** The value of `text` parsed strictly, else leniently; undefined when neither works. */
export const parseLenientJson = (text: string): { readonly value: unknown } | undefined => {
  const strict = tryParse(text)
  if (strict !== undefined) return strict
  const extracted = extractBalanced(text)
  if (extracted === undefined) return undefined
  return tryParse(extracted) ?? tryParse(dropTrailingCommas(extracted))
}

const tryParse = (text: string): { readonly value: unknown } | undefined => {
  try {
    return { value: JSON.parse(text) }
  } catch {
    return undefined
  }
}

/** The first balanced `{...}` or `[...]` of `text`, strings (and their escapes) respected. */
const extractBalanced = (text: string): string | undefined => {
  const start = text.search(/[[{]/)
  if (start < 0) return undefined
  const stack: Array<string> = []
  let inString = false
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
      if (stack.pop() !== ch) return undefined
      if (stack.length === 0) return text.slice(start, i + 1)
    }
  }
  return undefined
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
