/**
 * How the tools of an MCP server are named for an agent. Providers accept tool names of 1-64 letters,
 * digits, `_` and `-`; servers may use any string. The rules, applied to the whole list at once so the
 * result is deterministic and does not depend on the order the server lists its tools:
 *
 * 1. `<server>_<tool>` when that is already a valid name: kept as it is.
 * 2. Otherwise the refused characters become `_`; that name is kept when it fits in 64 characters and
 *    no other tool of the server has, or gets, the same name.
 * 3. Otherwise (too long, or colliding: `a.b` beside `a_b`) the name is cut to 55 characters and
 *    suffixed with `_` and 8 hex digits of a hash of the server's own tool name
 *    (`odd_files_read_feef3122` for `files.read` beside `files_read`); in the unlikely case that this
 *    is taken too, the hash is salted until it is free.
 *
 * So names are unique, valid, and each maps back to exactly one server tool (`toServer`).
 */
import { toolNamePattern } from "../dsl/tool.ts"

/**
 * The longest tool name providers accept.
 *
 * @example
 * ```ts
 * mcpToolName("fs", "x".repeat(100)).length <= maxToolNameLength // true
 * ```
 */
export const maxToolNameLength = 64

/** The agent names of a server's tools, both ways. */
export interface McpToolNaming {
  /** Server tool name → agent tool name. */
  readonly toAgent: ReadonlyMap<string, string>
  /** Agent tool name → server tool name. */
  readonly toServer: ReadonlyMap<string, string>
}

const refused = /[^A-Za-z0-9_-]/g
const stemLength = maxToolNameLength - 9 // room for "_" and 8 hex digits

/** FNV-1a over UTF-16 code units, as 8 hex digits: small, stable, no dependency. */
const hash8 = (text: string): string => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h.toString(16).padStart(8, "0")
}

/**
 * Names the tools `names` of the server `server` (see the rules above). Duplicate names in the list
 * count once.
 *
 * @example
 * ```ts
 * const { toAgent } = mcpToolNames("fs", ["files.read", "files_read"])
 * toAgent.get("files_read") // "fs_files_read"
 * toAgent.get("files.read") // "fs_files_read_" + 8 hex digits
 * ```
 */
export const mcpToolNames = (server: string, names: ReadonlyArray<string>): McpToolNaming => {
  const unique = [...new Set(names)].sort()
  const toAgent = new Map<string, string>()
  const taken = new Set<string>()
  const assign = (tool: string, name: string) => {
    toAgent.set(tool, name)
    taken.add(name)
  }
  // 1. Valid as they are.
  const rest: Array<string> = []
  for (const tool of unique) {
    const full = `${server}_${tool}`
    if (toolNamePattern.test(full)) assign(tool, full)
    else rest.push(tool)
  }
  // 2. Sanitised, when it fits and nobody else wants the same name.
  const sanitised = new Map(rest.map((tool) => [tool, `${server}_${tool}`.replace(refused, "_")]))
  const wanted = new Map<string, number>()
  for (const name of sanitised.values()) wanted.set(name, (wanted.get(name) ?? 0) + 1)
  const hashed: Array<string> = []
  for (const tool of rest) {
    const name = sanitised.get(tool)!
    if (name.length <= maxToolNameLength && wanted.get(name) === 1 && !taken.has(name)) assign(tool, name)
    else hashed.push(tool)
  }
  // 3. Cut and suffixed with a hash of the server's name of the tool.
  for (const tool of hashed) {
    const stem = sanitised.get(tool)!.slice(0, stemLength)
    let salt = 0
    let name = `${stem}_${hash8(tool)}`
    while (taken.has(name)) name = `${stem}_${hash8(`${tool}#${++salt}`)}`
    assign(tool, name)
  }
  const toServer = new Map([...toAgent].map(([tool, name]) => [name, tool]))
  return Object.freeze({ toAgent, toServer })
}

/**
 * The agent name of one server tool, as {@link mcpToolNames} gives it when no other tool of the
 * server competes for the same name. Prefer `toolset.nameOf(tool)`, which knows the whole list.
 *
 * @example
 * ```ts
 * mcpToolName("everything", "get-sum") // "everything_get-sum"
 * ```
 */
export const mcpToolName = (server: string, name: string): string => mcpToolNames(server, [name]).toAgent.get(name)!

type AllowedChar =
  | "a" | "b" | "c" | "d" | "e" | "f" | "g" | "h" | "i" | "j" | "k" | "l" | "m" | "n" | "o" | "p" | "q" | "r" | "s" | "t" | "u" | "v" | "w" | "x" | "y" | "z"
  | "A" | "B" | "C" | "D" | "E" | "F" | "G" | "H" | "I" | "J" | "K" | "L" | "M" | "N" | "O" | "P" | "Q" | "R" | "S" | "T" | "U" | "V" | "W" | "X" | "Y" | "Z"
  | "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9" | "_" | "-"

/**
 * `true` when `N` is a valid tool name (rule 1: kept as it is), computed by the compiler.
 *
 * @example
 * ```ts
 * const kept: IsValidToolName<"fs_read"> = true
 * const renamed: IsValidToolName<"fs_files.read"> = false
 * ```
 */
export type IsValidToolName<N extends string, Seen extends ReadonlyArray<0> = []> = Seen["length"] extends 65 ? false
  : N extends `${infer C}${infer Rest}` ? (C extends AllowedChar ? IsValidToolName<Rest, [...Seen, 0]> : false)
  : Seen["length"] extends 0 ? false
  : true
