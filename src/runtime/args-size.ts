/**
 * The cap on a tool call's raw arguments (`budget.maxToolArgsBytes`), checked before anything parses
 * them: a model (or a hostile proxy) sending megabytes of JSON costs one length check, not a parse, a
 * Schema decode and a repair attempt. Over the cap, the call is treated as invalid arguments (the
 * recovery handlers decide; by default the model is told) and the text is never parsed.
 */

// UTF-16 code units take at most 3 bytes in UTF-8: most calls are decided without encoding.
const encoder = new TextEncoder()

/** The UTF-8 size of `raw` when it is over `limit` bytes, else undefined. */
export const oversizeBytes = (raw: string, limit: number): number | undefined => {
  if (raw.length * 3 <= limit) return undefined
  if (raw.length > limit) return encoder.encode(raw).length
  const bytes = encoder.encode(raw).length
  return bytes > limit ? bytes : undefined
}

/** The issue reported for arguments over the cap. */
export const oversizeIssue = (bytes: number, limit: number): string =>
  `the arguments are ${bytes} bytes, over the limit of ${limit} bytes (budget maxToolArgsBytes); send shorter arguments`

/** What hooks see as the raw value of oversized arguments (never the text itself). */
export const oversizeValue = (bytes: number): string => `(${bytes} bytes of arguments, not parsed)`
