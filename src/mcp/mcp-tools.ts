/**
 * The tools of an MCP server as ordinary tools of an agent. Each server tool becomes a `Tool` named
 * `<server>_<tool>` (made valid and unique by the rules of `tool-names.ts`), whose argument validator is compiled from the server's `inputSchema` exactly like
 * a JSON Schema tool; registered with `.tools({...})`, it gets handles, allowlists, budgets, recovery
 * and hooks like any other tool. Calls go to the server through the scoped connection; `isError`
 * results, results that cannot be used (`structuredContent` nested too deep, see `tool-result.ts`, or
 * not keeping the tool's `outputSchema`) and transport failures are execution errors (`McpError`)
 * routed to the recovery handlers. A tool whose input or output schema cannot be validated is refused
 * (or skipped) on its own. Server tool names are keys like any other: `byServerName` has no prototype.
 * Arguments with a `"__proto__"` key are refused as invalid, and are checked on their own keys only
 * (see `argument-keys.ts`): what the server receives is what was checked.
 *
 * The server's tool list can change while the agent runs (`tools/list_changed`): a tool that the server
 * no longer offers fails when called, and a changed input schema is enforced from then on.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import { isReservedName } from "../dsl/agent-definition.ts"
import { compileJsonSchema } from "../dsl/json-schema-tool.ts"
import { type AnyTool, type Tool, tool } from "../dsl/tool.ts"
import { McpError } from "../errors.ts"
import { describeCause } from "../internal/describe-cause.ts"
import { type ArgsCodec, type ArgsDecoding, parseLoosely } from "../dsl/tool-codec.ts"
import { outgoingArguments } from "./argument-keys.ts"
import { connectMcp, type McpConnection, type McpConnectOptions, type McpToolInfo } from "./connection.ts"
import type { McpServerSpec } from "./server-spec.ts"
import { outputCheck } from "./output-schema.ts"
import { mapToolResult, type McpToolOutput, minMaxResultBytes } from "./tool-result.ts"
import { type IsValidToolName, mcpToolNames } from "./tool-names.ts"

/** A tool loaded from an MCP server. */
export type McpTool<Name extends string = string> = Tool<Name, unknown, McpToolOutput>

/** The declared names of `T` whose `<S>_<name>` is a valid tool name, kept as it is. */
type KeptNames<S extends string, T extends string> = T extends string ? (IsValidToolName<`${S}_${T}`> extends true ? T : never) : never

/**
 * The record of tools for a server named `S` declaring tool names `T`. A declared name whose
 * `<S>_<name>` is a valid tool name is a typed key; when some declared name is not (too long, or with
 * characters providers refuse), its agent name is only known at run time and the record is also
 * indexed by `string`: look such tools up with `toolset.byServerName[name]`.
 */
export type McpToolRecord<S extends string, T extends string> =
  & { readonly [K in KeptNames<S, T> as `${S}_${K}`]: McpTool<`${S}_${K}`> }
  & ([Exclude<T, KeptNames<S, T>>] extends [never] ? unknown : { readonly [name: string]: McpTool })

/** The loaded tools of one server, with the connection they call through. */
export interface McpToolset<TTools extends Record<string, AnyTool>, TServerNames extends string = string> {
  readonly server: string
  /** Keyed by agent tool name (`tool.name`): spread into `.tools({ ...toolset.tools })`. */
  readonly tools: TTools
  /** The same tools keyed by the server's own tool names. */
  readonly byServerName: { readonly [K in TServerNames]: McpTool }
  /** The agent tool name of a server tool (`undefined` for a tool that was not loaded). */
  readonly nameOf: (serverName: TServerNames) => string | undefined
  readonly connection: McpConnection
}

/** How server tools are turned into agent tools. */
export interface McpToolsOptions extends McpConnectOptions {
  /** Milliseconds a call may take before it fails as an execution error (default: the SDK's 60 s). */
  readonly timeoutMs?: number
  /**
   * Wrap results as untrusted data for the model (default true: a server's output comes from outside
   * the agent, see `untrustedOutput` on tools).
   */
  readonly untrustedOutput?: boolean
  /**
   * What to do with a server tool whose input or output schema cannot be validated (untyped path
   * only): `"fail"` (default) or `"skip"` it. Declared tools are never skipped.
   */
  readonly unsupportedSchemas?: "fail" | "skip"
  /**
   * The cap, in UTF-8 bytes, of one result handed to the model (default 65 536, at least
   * `minMaxResultBytes`, 128; see `tool-result.ts`): a longer result is cut and ends with a note saying
   * it was truncated. Binary data is always described, never inlined.
   */
  readonly maxResultBytes?: number
}

/**
 * Connects to `server` for the lifetime of the current scope and loads its tools. With `tools`, only
 * the declared tools are loaded, their names are checked against the server's list and typed; without
 * it, every tool the server offers is loaded, keyed by `string`.
 *
 * @example
 * ```ts
 * const program = Effect.scoped(Effect.gen(function* () {
 *   const { tools } = yield* mcpTools(everything, { tools: ["echo", "get-sum"] })
 *   const helper = agent("helper").model(model).tools(tools)
 *     .skills((t) => [skill("echo", "Repeat things").tools(t.everything_echo)])
 *   return yield* helper.runEffect("Echo hello")
 * }))
 * ```
 */
export function mcpTools<const S extends string, const T extends string>(
  server: McpServerSpec<S>,
  options: McpToolsOptions & { readonly tools: ReadonlyArray<T> }
): Effect.Effect<McpToolset<McpToolRecord<S, T>, T>, McpError, Scope.Scope>
export function mcpTools<const S extends string>(
  server: McpServerSpec<S>,
  options?: McpToolsOptions
): Effect.Effect<McpToolset<Record<string, McpTool>>, McpError, Scope.Scope>
export function mcpTools(
  server: McpServerSpec,
  options: McpToolsOptions & { readonly tools?: ReadonlyArray<string> } = {}
): Effect.Effect<McpToolset<Record<string, McpTool>>, McpError, Scope.Scope> {
  return Effect.gen(function*() {
    const reserved = (names: ReadonlyArray<readonly [tool: string, name: string]>) => {
      const hit = names.find(([, name]) => isReservedName(name))
      return hit === undefined ? undefined : new McpError({
        server: server.name,
        operation: "connect",
        reason: `tool "${hit[0]}" would be named "${hit[1]}", a reserved name (memory_* belongs to the agent's .memory() tools; ` +
          `escalate and throwException are built in): rename the server (for example "${server.name}-server")`
      })
    }
    const cap = options.maxResultBytes
    if (cap !== undefined && !(Number.isSafeInteger(cap) && cap >= minMaxResultBytes)) {
      return yield* new McpError({
        server: server.name,
        operation: "connect",
        reason: `maxResultBytes must be an integer of at least ${minMaxResultBytes} (room for the note saying a result was truncated), got ${cap}`
      })
    }
    // Refused before anything starts when the server's name alone makes every tool name reserved.
    const early = reserved([[options.tools?.[0] ?? "<tool>", `${server.name}_${options.tools?.[0] ?? "<tool>"}`]])
    if (early !== undefined) return yield* early
    const connection = yield* connectMcp(server, options)
    const listed = connection.listed()
    const declared = options.tools
    const fail = (reason: string, cause?: unknown) => new McpError({ server: server.name, operation: "list", reason, cause })
    if (declared !== undefined) {
      const offered = new Set(listed.map((t) => t.name))
      const missing = declared.filter((name) => !offered.has(name))
      if (missing.length > 0) {
        return yield* fail(`does not offer ${missing.map((m) => `"${m}"`).join(", ")}; it offers: ${[...offered].join(", ")}`)
      }
    }
    // Named over the whole list (not only the selection), so a tool's name does not depend on which were declared.
    const naming = mcpToolNames(server.name, listed.map((t) => t.name))
    const selected = declared === undefined ? listed : listed.filter((t) => declared.includes(t.name))
    const clash = reserved(selected.map((t) => [t.name, naming.toAgent.get(t.name)!] as const))
    if (clash !== undefined) return yield* clash
    // Keyed by names from outside (`constructor`, `__proto__`, `toString` are tool names like any
    // other): a Map while loading, records without a prototype handed out, so nothing is inherited.
    const loaded = new Map<string, McpTool>()
    for (const info of selected) {
      if (loaded.has(info.name)) continue // a server listing a name twice: the first wins
      const built = buildTool(server.name, naming.toAgent.get(info.name)!, info, connection, options)
      if (built._tag === "Failure") {
        if (declared === undefined && options.unsupportedSchemas === "skip") continue
        return yield* fail(built.reason, built.cause)
      }
      loaded.set(info.name, built.tool)
    }
    const tools = ownRecord([...loaded.values()].map((t) => [t.name, t] as const))
    const byServerName = ownRecord([...loaded])
    const nameOf = (serverName: string) => loaded.get(serverName)?.name
    return Object.freeze({ server: server.name, tools, byServerName, nameOf, connection })
  })
}

/** A frozen record of `entries` without a prototype: every key is an own data property, whatever its name. */
const ownRecord = <A>(entries: Iterable<readonly [string, A]>): Readonly<Record<string, A>> => {
  const record: Record<string, A> = Object.create(null)
  for (const [key, value] of entries) Object.defineProperty(record, key, { value, enumerable: true, writable: false, configurable: false })
  return Object.freeze(record)
}

type Built = { readonly _tag: "Success"; readonly tool: McpTool } | { readonly _tag: "Failure"; readonly reason: string; readonly cause: unknown }

const buildTool = (server: string, name: string, first: McpToolInfo, connection: McpConnection, options: McpToolsOptions): Built => {
  // What the server offers now for this tool: its validator follows `tools/list_changed`.
  let current: { readonly info: McpToolInfo | undefined; readonly decode: (raw: unknown) => Result.Result<unknown, string> }
  let base: McpTool
  if (first.invalid !== undefined) return { _tag: "Failure", reason: `tool "${first.name}": ${first.invalid}`, cause: undefined }
  try {
    base = tool(name, {
      ...(first.description === undefined ? {} : { description: first.description }),
      parameters: first.inputSchema,
      tags: ["mcp", `mcp:${server}`],
      safe: first.readOnly,
      untrustedOutput: options.untrustedOutput ?? true,
      run: (args: unknown) => call(server, connection, current.info, args, options, recheck)
    })
  } catch (error) {
    return { _tag: "Failure", reason: `tool "${first.name}": ${describeCause(error)}`, cause: error }
  }
  if (!base.codec.validated) return { _tag: "Failure", reason: `tool "${first.name}" has no schema`, cause: undefined }
  // Its results are checked against its output schema (`connection.ts`): one that cannot be is refused now.
  const output = first.outputSchema === undefined ? undefined : outputCheck(first.outputSchema)
  if (output !== undefined && Result.isFailure(output)) return { _tag: "Failure", reason: `tool "${first.name}": ${output.failure}`, cause: undefined }
  current = { info: first, decode: base.codec.check }
  connection.onToolsChanged((tools) => {
    const info = tools.find((t) => t.name === first.name)
    if (info === undefined) {
      current = { info: undefined, decode: current.decode }
    } else if (info.invalid !== undefined) {
      const reason = `the server now lists "${first.name}" in a form that cannot be used: ${info.invalid}`
      current = { info: undefined, decode: () => Result.fail(reason) }
    } else if (JSON.stringify(info.inputSchema) !== JSON.stringify(current.info?.inputSchema)) {
      try {
        current = { info, decode: compileJsonSchema(info.inputSchema, { strict: false }).decode }
      } catch (error) {
        const reason = `the server changed the input schema of "${first.name}" to one that cannot be validated: ${describeCause(error)}`
        current = { info: undefined, decode: () => Result.fail(reason) }
      }
    } else {
      current = { info, decode: current.decode }
    }
  })
  // A `"__proto__"` key is refused (the server's SDK would drop it), and only own keys are read.
  const check = outgoingArguments((raw) => current.decode(raw))
  // A call sent again on a new session (the server restarted, its tools listed again) is checked against
  // what the server offers now: refused, nothing is sent.
  const recheck = (args: unknown): unknown => {
    if (current.info === undefined) throw new Error("the server no longer offers this tool (it restarted without it): nothing was sent")
    const again = check(args)
    if (Result.isFailure(again)) {
      throw new Error(`invalid arguments: the server restarted and the tool's input schema now refuses them, so nothing was sent:\n${again.failure}`)
    }
    return again.success
  }
  const codec: ArgsCodec<unknown> = Object.freeze({
    ...base.codec,
    check,
    decode: (raw: unknown): ArgsDecoding<unknown> => {
      const decoded = check(raw)
      return Result.isSuccess(decoded)
        ? { _tag: "Valid", args: decoded.success, corrections: [] }
        : { _tag: "Invalid", issues: decoded.failure, value: parseLoosely(raw) }
    }
  })
  return { _tag: "Success", tool: Object.freeze({ ...base, codec }) }
}

const call = (
  server: string,
  connection: McpConnection,
  info: McpToolInfo | undefined,
  args: unknown,
  options: McpToolsOptions,
  recheck: (args: unknown) => unknown
) =>
  Effect.gen(function*() {
    if (info === undefined) {
      return yield* new McpError({ server, operation: "call", reason: "the server no longer offers this tool (tools/list_changed)" })
    }
    const result = yield* Effect.tryPromise({
      try: (signal) => connection.callTool(info.name, args, { signal, recheck, ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }) }),
      catch: (cause) => new McpError({ server, operation: "call", reason: `tool "${info.name}": ${describeCause(cause)}`, cause })
    })
    const mapped = mapToolResult(result, options.maxResultBytes === undefined ? {} : { maxResultBytes: options.maxResultBytes })
    if (mapped._tag === "ToolError") {
      return yield* new McpError({ server, operation: "call", reason: `tool "${info.name}" returned an error: ${mapped.text}` })
    }
    if (mapped._tag === "Unusable") {
      return yield* new McpError({ server, operation: "call", reason: `tool "${info.name}" returned a result that cannot be used: ${mapped.reason}` })
    }
    return mapped.output
  })
