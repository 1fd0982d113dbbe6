/**
 * Keys of a tool call's arguments named like the members of `Object.prototype`, at the MCP border.
 *
 * `"__proto__"` cannot cross MCP: the SDK rebuilds `tools/call` arguments and silently drops it (its
 * request schema skips it at the top level, an `McpServer`'s input schema in every object or record
 * below, since a plain assignment would set the prototype instead), so a call carrying one would run with other arguments
 * than those checked. Both directions refuse it, with its path, as invalid arguments, before anything
 * runs: the client before the call leaves the process (the model is told, like any invalid call), the
 * server before the tool or agent runs.
 *
 * `constructor`, `toString`, `prototype` and the like are ordinary keys. Effect's struct parser reads
 * a declared key with `key in input`, so on a plain object an absent `constructor` would be read from
 * `Object.prototype` (refusing a valid call, or handing a function on): a server's JSON arguments are
 * checked as objects without a prototype, then handed on as plain objects again.
 */
import * as Result from "effect/Result"
import { detachPrototypes, isContainer, withPlainPrototypes } from "../internal/prototype-free.ts"

/**
 * The issue refusing the first `"__proto__"` own key in `value` (the arguments, at any depth), in the
 * Schema issues' format (message, then `  at <path>`); `undefined` when there is none.
 *
 * @example
 * ```ts
 * protoKeyIssue(JSON.parse('{"a":[{"__proto__":{}}]}')) // '… \n  at ["a"][0]["__proto__"]'
 * protoKeyIssue({ a: 1 })                               // undefined
 * ```
 */
export const protoKeyIssue = (value: unknown): string | undefined => {
  const seen = new Set<object>()
  const stack: Array<Frame> = [{ value, key: undefined, parent: undefined }]
  while (stack.length > 0) {
    const frame = stack.pop()!
    const node = frame.value
    if (!isContainer(node) || seen.has(node)) continue
    seen.add(node)
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push({ value: node[i], key: i, parent: frame })
      continue
    }
    if (Object.hasOwn(node, "__proto__")) {
      return `Key "__proto__" is not accepted in MCP tool arguments (MCP SDK servers drop it, so a call could not run with the arguments checked)\n  at ${pathOf({ value: undefined, key: "__proto__", parent: frame })}`
    }
    const keys = Object.keys(node)
    for (let i = keys.length - 1; i >= 0; i--) stack.push({ value: (node as Record<string, unknown>)[keys[i]!], key: keys[i], parent: frame })
  }
  return undefined
}

/**
 * The check of arguments bound for a server: `decode` (the server's input schema) applied to the JSON
 * arguments (text, or a parsed value) as objects without a prototype, so that it reads their own keys
 * only, after refusing a `"__proto__"` key; what it accepts is handed back as plain objects and arrays.
 * Text that is not JSON, or JSON that is not an object or array, goes to `decode` as it is, to be
 * reported in its words.
 *
 * @example
 * ```ts
 * const check = outgoingArguments(compileJsonSchema({ type: "object", properties: { constructor: { type: "string" } } }, { strict: false }).decode)
 * check("{}")                   // Result.succeed({}): the plain decoder read Object's constructor and refused it
 * check('{"__proto__":{"a":1}}') // Result.fail('Key "__proto__" is not accepted … at ["__proto__"]')
 * ```
 */
export const outgoingArguments = (decode: (raw: unknown) => Result.Result<unknown, string>) => (raw: unknown): Result.Result<unknown, string> => {
  let parsed: unknown = raw
  if (typeof raw === "string") {
    if (raw.trim() === "") {
      parsed = {}
    } else {
      try {
        parsed = JSON.parse(raw)
      } catch {
        return decode(raw)
      }
    }
  }
  // Anything but an object or array is refused by `decode` in its own words (a string would be read as JSON text).
  if (!isContainer(parsed)) return decode(raw)
  let detached: ReturnType<typeof detachPrototypes<unknown>>
  try {
    const refused = protoKeyIssue(parsed)
    if (refused !== undefined) return Result.fail(refused)
    detached = detachPrototypes<unknown>(parsed)
  } catch (error) {
    // Fixed arguments (from a recovery handler) with a throwing getter or proxy trap: refused, never a defect.
    return Result.fail(`the arguments could not be checked: ${error instanceof Error ? error.message : String(error)}`)
  }
  const decoded = decode(detached.value)
  detached.reattach()
  return Result.map(decoded, withPlainPrototypes)
}

interface Frame {
  readonly value: unknown
  readonly key: string | number | undefined
  readonly parent: Frame | undefined
}

const pathOf = (frame: Frame): string => {
  const keys: Array<string> = []
  for (let at: Frame | undefined = frame; at?.key !== undefined; at = at.parent) keys.push(`[${JSON.stringify(at.key)}]`)
  return keys.reverse().join("")
}
