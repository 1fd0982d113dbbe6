/**
 * Text as the durable stores keep it in PostgreSQL (and PGlite), which refuses a NUL character in
 * `text` and the `\u0000` escape in `jsonb`. Keys kept in text columns (activity names, intent keys,
 * journal keys, run ids) are built from ids that come from outside (a model's tool call id, a caller's
 * run id): a key is stored escaped, `\` as `\\` and NUL as `\0`, one to one (two different keys
 * never meet), and unchanged when it holds neither (the common case). What must come back exactly (a
 * tool's recorded outcome, a run's snapshot) is stored as JSON text; only journal events, which are
 * shown, never replayed, are `jsonb`, a NUL in one stored as U+FFFD (`jsonbText`).
 */

/**
 * `key` as it can be stored in a text column.
 *
 * @example
 * ```ts
 * textKey("tool/run_1/2/call\u0000x") // "tool/run_1/2/call\\0x"
 * ```
 */
export const textKey = (key: string): string =>
  key.indexOf("\\") === -1 && key.indexOf("\u0000") === -1 ? key : key.replace(/\\/g, "\\\\").replace(/\u0000/g, "\\0")

/**
 * The key `textKey` stored.
 *
 * @example
 * ```ts
 * fromTextKey("call\\0x") // "call\u0000x"
 * ```
 */
export const fromTextKey = (stored: string): string =>
  stored.indexOf("\\") === -1 ? stored : stored.replace(/\\(\\|0)/g, (_, c: string) => (c === "0" ? "\u0000" : "\\"))

/**
 * JSON text that `jsonb` takes: an escaped NUL (`\u0000`, which PostgreSQL refuses) becomes U+FFFD.
 *
 * @example
 * ```ts
 * jsonbText(JSON.stringify({ s: "a\u0000b" })) // '{"s":"a\\ufffdb"}'
 * ```
 */
export const jsonbText = (json: string): string =>
  json.includes("\\u0000") ? json.replace(/(?<!\\)((?:\\\\)*)\\u0000/g, "$1\\ufffd") : json
