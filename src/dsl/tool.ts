/**
 * Tools: a name, a description, an Effect Schema for the arguments and a `run` function. The Schema is
 * the single source of the argument type, the JSON Schema sent to models and the runtime check.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { AgentConfigError } from "../errors.ts"
import { checkBoolean, checkOptions, checkRecovery, checkSchema, kindOf, toolOptionKeys, toolOptionRenamed } from "./builder-validation.ts"
import { type Abortable, type AroundAnswer, fromMaybeEffect, fromMaybeEffectSettled, type MaybeEffect, type Settle } from "../internal/from-maybe-effect.ts"
import { type ToolImplementation, toolImplementationKey } from "./tool-implementation.ts"
import { compileJsonSchema, type ToolJsonSchema } from "./json-schema-tool.ts"
import type { ToolDefinition } from "../model/messages.ts"
import { type RepairOptions, repairOptions } from "./repair-arguments.ts"
import type { RecoveryHandlers } from "./recovery.ts"
import { type ArgsCodec, schemaCodec, unsafeCodec } from "./tool-codec.ts"
import { type ArgsSchema, toolParameters } from "./tool-parameters.ts"

/** What a running tool gets beside its arguments. `signal` aborts when the run is interrupted. */
export interface ToolContext {
  readonly toolCallId: string
  readonly signal: AbortSignal
  /**
   * In a durable run (`effect-agent-dsl/durable`), a key stable over every execution of this call
   * (the run id, the turn and the call id), to hand to the service the tool calls so a repeated
   * request is recognised; undefined in a plain run. Meant for `effect: "idempotent"` tools.
   */
  readonly idempotencyKey?: string | undefined
  /**
   * Reports progress of a long call (a percentage, a status line, a remote agent's update): each value
   * becomes a `ToolProgress` event of the run, for hooks (`onToolProgress`) and streams, in order and
   * before the call's outcome. Values reported after the call ended, or that nobody hears (no hook, no
   * stream), are dropped at no cost; reporting never fails the call.
   *
   * @example
   * ```ts
   * run: async ({ url }, { progress }) => { progress({ stage: "downloading" }); return await fetchAll(url) }
   * ```
   */
  readonly progress: (data: unknown) => void
}

/**
 * How a tool's effects behave when a durable run executes it again after a crash (see
 * `effect-agent-dsl/durable`): `readOnly` (no effect: run it again freely), `idempotent` (run again
 * with the same `idempotencyKey`, which the service it calls deduplicates), `mutating` (never run
 * again blindly: a call whose outcome was lost goes to reconciliation). The default is `mutating`:
 * code whose effects are unknown is never run twice. Plain runs ignore it.
 *
 * @example
 * ```ts
 * const weather = tool("weather", { args: Schema.Struct({ city: Schema.String }), effect: "readOnly", run: ({ city }) => lookup(city) })
 * ```
 */
export type ToolEffectClass = "readOnly" | "idempotent" | "mutating"

/** The effect class of tools that do not declare one: never run twice what may have had an effect. */
export const defaultToolEffect: ToolEffectClass = "mutating"

/** How much a tool without an argument Schema may do; recorded in hooks and spans. */
export type UnsafeMode = "read-only" | "human-approval" | "full"

/** The explicit opt-out from argument validation. See {@link unsafeNoSchema}. */
export interface UnsafeNoSchema<Mode extends UnsafeMode = UnsafeMode> {
  readonly _tag: "UnsafeNoSchema"
  readonly mode: Mode
}

/**
 * Declares a tool without an argument Schema. Its `run` receives the parsed JSON (or the raw string
 * when it is not JSON) typed as `unknown`, and its calls are marked `validated: false`.
 *
 * @example
 * ```ts
 * const log = tool("log", { args: unsafeNoSchema({ mode: "read-only" }), run: (args) => JSON.stringify(args) })
 * ```
 */
export const unsafeNoSchema = <const Mode extends UnsafeMode>(options: { readonly mode: Mode }): UnsafeNoSchema<Mode> => {
  checkUnsafeMode("unsafeNoSchema(...)", options?.mode)
  return { _tag: "UnsafeNoSchema", mode: options.mode }
}

const unsafeModes: ReadonlyArray<unknown> = ["read-only", "human-approval", "full"]

/** Untyped callers: the mode decides approval and pre-selection, so a misspelt one is refused, not read as "full". */
const checkUnsafeMode = (where: string, mode: unknown): void => {
  if (unsafeModes.includes(mode)) return
  const shown = typeof mode === "string" ? JSON.stringify(mode) : kindOf(mode)
  throw new AgentConfigError({ subject: where, reason: `\`mode\` must be "read-only", "human-approval" or "full": unsafeNoSchema({ mode: "read-only" }); got ${shown}` })
}

/** Where a tool keeps what only the loop uses: a registered symbol, out of completions and JSON. */
export const ToolInternals: unique symbol = Symbol.for("effect-agent-dsl/ToolInternals")

/** What only the loop uses. */
export interface ToolInternalsOf<Args, Result, R = never> {
  /** Runs the tool on already-decoded arguments; interruption aborts the context's signal. */
  readonly execute: (
    args: Args,
    toolCallId: string,
    idempotencyKey?: string,
    around?: AroundAnswer,
    progress?: (data: unknown) => void
  ) => Effect.Effect<Result, unknown, R>
  /**
   * `execute` answering its outcome as an Exit (what the tool gave, or what it threw, rejected with or
   * failed with), in the call's own step: the loop's plain tool call, without an `Effect.exit` around
   * it (issue #37). An interruption from outside stays one.
   */
  readonly executeExit: (
    args: Args,
    toolCallId: string,
    around?: AroundAnswer
  ) => Effect.Effect<Exit.Exit<Result, unknown>, never, R>
  /**
   * Whether this call needs a human decision before it runs (undefined: never). A predicate that
   * throws or fails counts as "needs approval": the safe side.
   */
  readonly needsApproval: ((args: Args, context: ApprovalContext) => Effect.Effect<boolean>) | undefined
}

/** What a `needsApproval` predicate gets beside the decoded arguments. */
export interface ApprovalContext {
  readonly toolCallId: string
  readonly agent: string
  readonly skill: string
}

/**
 * When a tool's calls wait for a human decision: `true` (always), or a predicate on the decoded
 * arguments (sync, Promise or Effect).
 *
 * @example
 * ```ts
 * const needsApproval: NeedsApproval<{ readonly amount: number }> = ({ amount }) => amount > 100
 * ```
 */
export type NeedsApproval<Args> = true | ((args: Args, context: ApprovalContext) => MaybeEffect<boolean>)



/**
 * A typed tool. `Name` is its literal name, `Args` the decoded argument type, `Result` what `run`
 * produces, `R` the services its `run` requires (`ToolImplementation<Name>` for a tool declared
 * without `run`). Build one with {@link tool}.
 *
 * @example
 * ```ts
 * type AddArgs = Tool.Args<typeof add> // { readonly a: number; readonly b: number }
 * ```
 */
export interface Tool<Name extends string, Args, Result, R = never, Approval extends boolean = false> {
  readonly _tag: "Tool"
  readonly name: Name
  readonly description: string | undefined
  /** The canonical definition sent to models; `parameters` is generated from the Schema. */
  readonly definition: ToolDefinition
  /** The argument codec: decode (parse, Schema, opt-in repair), the Schema and its JSON codec. */
  readonly codec: ArgsCodec<Args>
  /** @internal What only the loop uses; see `executeTool`. */
  readonly [ToolInternals]: ToolInternalsOf<Args, Result, R>
  readonly tags: ReadonlyArray<string>
  /** False for tools with side effects that tool pre-selection must not offer without consent. */
  readonly safe: boolean
  /** The tool's own recovery handlers (`recover`); they take priority over the agent's. */
  readonly recover: RecoveryHandlers<string, any> | undefined
  /** Results are wrapped as untrusted data before the model sees them. */
  readonly untrustedOutput: boolean
  /** How its effects behave when a durable run executes it again (default `"mutating"`). */
  readonly effect: ToolEffectClass
  /**
   * True when some calls of this tool wait for a human decision (`needsApproval`, or
   * `unsafeNoSchema({ mode: "human-approval" })`). The type records it, so an agent with such a tool
   * returns `Completed | Suspended` from `run`.
   */
  readonly mayNeedApproval: Approval
}

/** Any tool, whatever its name, arguments, result, requirements and approval flag. */
export type AnyTool = Tool<string, any, any, any, boolean>

/** Type-level accessors for tools. */
export declare namespace Tool {
  /** The literal name of a tool. */
  export type Name<T> = T extends Tool<infer N, any, any, any, any> ? N : never
  /** The decoded argument type of a tool. */
  export type Args<T> = T extends Tool<any, infer A, any, any, any> ? A : never
  /** The result type of a tool. */
  export type Result<T> = T extends Tool<any, any, infer R, any, any> ? R : never
  /** The services a tool's `run` requires. */
  export type Requirements<T> = T extends Tool<any, any, any, infer R, any> ? R : never
  /** True when some calls of the tool may wait for a human decision. */
  export type MayNeedApproval<T> = T extends Tool<any, any, any, any, infer F> ? F : never
}

interface ToolOptionsBase {
  readonly description?: string
  readonly tags?: ReadonlyArray<string>
  /** Default true. Unsafe tools are left out of tool pre-selection unless explicitly allowed. */
  readonly safe?: boolean
  /**
   * The result comes from outside (web pages, emails, user files): the model gets it wrapped in
   * `{ "tool", "trusted": false, "value" }` and the system prompt warns that such content is data.
   */
  readonly untrustedOutput?: boolean
  /**
   * How its effects behave when a durable run executes it again after a crash: `"readOnly"`,
   * `"idempotent"` (gets `context.idempotencyKey`) or `"mutating"` (the default: a call whose outcome
   * was lost is never run again blindly). See `ToolEffectClass`; plain runs ignore it.
   */
  readonly effect?: ToolEffectClass
}

/** The approval option of a tool whose calls may wait for a human decision (`Args`: decoded arguments). */
export interface WithApproval<Args> {
  /**
   * Calls wait for a human decision before they run: `true`, or a predicate on the decoded arguments.
   * The run suspends with the pending calls; `agent.resume(snapshot, decisions)` continues it. Any
   * value given (even `false`) marks the tool as one that may need approval, so `run` returns
   * `Completed | Suspended`; leave the option out for a tool that never does.
   */
  readonly needsApproval: NeedsApproval<Args> | boolean
}

/** The approval option of a tool whose calls never wait. */
export interface WithoutApproval {
  readonly needsApproval?: false | undefined
}

/** Options of a tool whose arguments are described by a Schema. */
export interface SchemaToolOptions<S extends ArgsSchema, R, Name extends string = string, Req = never> extends ToolOptionsBase {
  readonly args: S
  /** This tool's recovery handlers, ahead of the agent's `.recoverTool(name)` and `.recover` defaults. */
  readonly recover?: RecoveryHandlers<Name, Req>
  readonly run: (args: S["Type"], context: ToolContext) => MaybeEffect<R, Req>
  /** Generate an OpenAI strict-mode schema (all keys required, optional keys nullable). */
  readonly strict?: boolean
  /**
   * Repair near-misses before giving up on invalid arguments: literal values off by case, a substring
   * or a few letters; numbers sent as strings; JSON sent as a string. `true` enables all. Every repair is
   * decoded again with the Schema and reported (`onArgsRepaired`, span attribute `tool.repaired`).
   */
  readonly repair?: boolean | RepairOptions
}

/** Options of a tool that explicitly opts out of argument validation. */
export interface UnsafeToolOptions<R, Name extends string = string, Req = never, Mode extends UnsafeMode = UnsafeMode> extends ToolOptionsBase {
  readonly args: UnsafeNoSchema<Mode>
  /** This tool's recovery handlers for execution errors (its arguments are never invalid). */
  readonly recover?: Pick<RecoveryHandlers<Name, Req>, "executionError">
  readonly run: (args: unknown, context: ToolContext) => MaybeEffect<R, Req>
}

/**
 * Options of a tool declared without `run`: it is implemented by a Layer (`toolLayer(tool, run)`), and
 * an agent using it requires `ToolImplementation<Name>` until one is provided. `success` types the result.
 */
export interface DeclaredToolOptions<S extends ArgsSchema, Success, Name extends string = string> extends ToolOptionsBase {
  readonly args: S
  /** The result's Schema; only its type is used (the result is what the implementation returns). */
  readonly success?: Schema.Codec<Success, any, never, never>
  readonly recover?: RecoveryHandlers<Name>
  readonly strict?: boolean
  readonly repair?: boolean | RepairOptions
  readonly run?: never
}

/**
 * Options of a tool whose arguments are described by a JSON Schema (2020-12, or draft-07 through
 * `$schema`). `run` gets `unknown` unless its parameter is annotated with a type.
 */
export interface JsonSchemaToolOptions<Args, R, Name extends string = string, Req = never> extends ToolOptionsBase {
  /** Stored verbatim (deep-frozen), sent to models as is, and compiled once into the argument validator. */
  readonly parameters: ToolJsonSchema
  /** This tool's recovery handlers, ahead of the agent's `.recoverTool(name)` and `.recover` defaults. */
  readonly recover?: RecoveryHandlers<Name, Req>
  readonly run: (args: Args, context: ToolContext) => MaybeEffect<R, Req>
  /** Check at registration that `parameters` is in OpenAI's strict subset, and mark the definition strict. */
  readonly strict?: boolean
  /** As for Schema tools: repairs guided by the compiled Schema, always validated again. */
  readonly repair?: boolean | RepairOptions
}

/** What providers accept as a tool name. */
export const toolNamePattern = /^[A-Za-z0-9_-]{1,64}$/

/**
 * Defines a tool. `run` may return a value, a Promise or an Effect; it only ever sees arguments that
 * decoded with `args`. Use `Schema.Finite` rather than `Schema.Number` for numbers: the latter also
 * admits "NaN"/"Infinity" strings in JSON.
 *
 * @example
 * ```ts
 * const add = tool("add", {
 *   description: "Add two numbers",
 *   args: Schema.Struct({ a: Schema.Finite.annotate({ description: "left" }), b: Schema.Finite }),
 *   run: ({ a, b }) => a + b
 * })
 * ```
 */
export function tool<const Name extends string, S extends ArgsSchema, R, Req = never>(
  name: Name,
  options: SchemaToolOptions<S, R, Name, Req> & WithApproval<S["Type"]>
): Tool<Name, S["Type"], R, Req, true>
export function tool<const Name extends string, S extends ArgsSchema, R, Req = never>(
  name: Name,
  options: SchemaToolOptions<S, R, Name, Req> & WithoutApproval
): Tool<Name, S["Type"], R, Req>
export function tool<const Name extends string, R, Req = never>(
  name: Name,
  options: UnsafeToolOptions<R, Name, Req> & WithApproval<unknown>
): Tool<Name, unknown, R, Req, true>
export function tool<const Name extends string, R, const Mode extends UnsafeMode, Req = never>(
  name: Name,
  options: UnsafeToolOptions<R, Name, Req, Mode> & WithoutApproval
): Tool<Name, unknown, R, Req, Mode extends "human-approval" ? true : false>
/**
 * Declares a tool without `run`, implemented by a Layer: `toolLayer(tool, run)`. Agents using it
 * require `ToolImplementation<Name>`, so tests can provide another implementation.
 *
 * @example
 * ```ts
 * const lookup = tool("lookup", { args: Schema.Struct({ id: Schema.String }), success: Schema.String })
 * const LookupTest = toolLayer(lookup, ({ id }) => `order ${id}: shipped`)
 * ```
 */
export function tool<const Name extends string, S extends ArgsSchema, Success = unknown>(
  name: Name,
  options: DeclaredToolOptions<S, Success, Name> & WithoutApproval
): Tool<Name, S["Type"], Success, ToolImplementation<Name>>
export function tool<const Name extends string, S extends ArgsSchema, Success = unknown>(
  name: Name,
  options: DeclaredToolOptions<S, Success, Name> & WithApproval<S["Type"]>
): Tool<Name, S["Type"], Success, ToolImplementation<Name>, true>
/**
 * Defines a tool from a JSON Schema. Arguments the schema refuses never reach `run`.
 *
 * @example
 * ```ts
 * const weather = tool("weather", {
 *   parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
 *   run: (args: { city: string }) => `sunny in ${args.city}`
 * })
 * ```
 */
export function tool<const Name extends string, Args = unknown, R = unknown, Req = never>(
  name: Name,
  options: JsonSchemaToolOptions<Args, R, Name, Req> & WithApproval<Args>
): Tool<Name, Args, R, Req, true>
export function tool<const Name extends string, Args = unknown, R = unknown, Req = never>(
  name: Name,
  options: JsonSchemaToolOptions<Args, R, Name, Req> & WithoutApproval
): Tool<Name, Args, R, Req>
export function tool(
  name: string,
  options:
    | SchemaToolOptions<ArgsSchema, unknown, string, any>
    | UnsafeToolOptions<unknown, string, any>
    | JsonSchemaToolOptions<unknown, unknown, string, any>
    | DeclaredToolOptions<ArgsSchema, unknown>
): AnyTool {
  const fail = (reason: string) => new AgentConfigError({ subject: `tool "${name}"`, reason })
  if (typeof name !== "string" || !toolNamePattern.test(name)) {
    throw fail("a tool name must be 1-64 letters, digits, '_' or '-'")
  }
  // Untyped callers: an option nobody reads (a recovery policy under an old name) is refused, not dropped.
  checkOptions(`tool "${name}"`, "tool(name, options)", options, toolOptionKeys, toolOptionRenamed)
  checkToolOptions(name, options)
  if (options?.run === undefined && typeof options === "object" && options !== null && "args" in options && Schema.isSchema(options.args)) {
    options = { ...options, run: implementedByLayer(name) }
  }
  if (typeof options?.run !== "function") throw fail("`run` must be a function (or leave it out, with an `args` Schema, to implement the tool with toolLayer)")
  const needsApproval: unknown = (options as { readonly needsApproval?: unknown }).needsApproval
  if (needsApproval !== undefined && typeof needsApproval !== "boolean" && typeof needsApproval !== "function") {
    throw fail("`needsApproval` must be true, false or a function of the arguments")
  }
  if ("parameters" in options && !("args" in options)) {
    const strict = options.strict === true
    let contract: ReturnType<typeof compileJsonSchema>
    try {
      contract = compileJsonSchema(options.parameters, { strict })
    } catch (error) {
      throw fail(error instanceof Error ? error.message : String(error))
    }
    return makeTool(name, options, schemaCodec(contract.schema, contract, repairOptions(options.repair)), contract.jsonSchema, strict)
  }
  const args: unknown = options.args
  if (isUnsafeNoSchema(args)) return makeTool(name, options, unsafeCodec(args.mode), { type: "object" }, false)
  if (!Schema.isSchema(args)) {
    throw fail("`args` must be an Effect Schema; declare `args: unsafeNoSchema({ mode })` to opt out of validation")
  }
  const strict = "strict" in options && options.strict === true
  const schema = args as ArgsSchema
  let parameters: ReturnType<typeof toolParameters>
  try {
    parameters = toolParameters(schema, { strict })
  } catch (error) {
    throw fail(error instanceof Error ? error.message : String(error))
  }
  const repair = repairOptions("repair" in options ? options.repair : undefined)
  return makeTool(name, options, schemaCodec(schema, parameters, repair), parameters.jsonSchema, strict)
}

/**
 * Untyped callers: options of the wrong kind are refused rather than read loosely (`safe: "false"` is
 * truthy, `tags: "math"` would become four tags, a misspelt `recover` handler would never run).
 */
const checkToolOptions = (name: string, options: unknown): void => {
  if (typeof options !== "object" || options === null) return
  const subject = `tool "${name}"`
  const o = options as Record<string, unknown>
  if (o["description"] !== undefined && typeof o["description"] !== "string") {
    throw new AgentConfigError({ subject, reason: `\`description\` must be a string, got ${kindOf(o["description"])}` })
  }
  if (o["tags"] !== undefined && !(Array.isArray(o["tags"]) && o["tags"].every((t) => typeof t === "string"))) {
    throw new AgentConfigError({ subject, reason: `\`tags\` must be an array of strings, tags: ["math"]; got ${kindOf(o["tags"])}` })
  }
  for (const flag of ["safe", "untrustedOutput", "strict"]) {
    if (o[flag] !== undefined) checkBoolean(subject, `\`${flag}\``, o[flag])
  }
  const repair = o["repair"]
  if (repair !== undefined && typeof repair !== "boolean") {
    if (kindOf(repair) !== "an object") {
      throw new AgentConfigError({ subject, reason: `\`repair\` must be true, false or { literals?, numericStrings?, jsonStrings? }, got ${kindOf(repair)}` })
    }
    checkOptions(subject, "`repair`", repair, ["literals", "numericStrings", "jsonStrings"])
    for (const [key, value] of Object.entries(repair as object)) checkBoolean(subject, `\`repair.${key}\``, value)
  }
  if (o["recover"] !== undefined) checkRecovery(subject, "tool(name, options)'s `recover`", o["recover"], false)
  if ("args" in o && "parameters" in o) {
    throw new AgentConfigError({ subject, reason: "give either `args` (an Effect Schema) or `parameters` (a JSON Schema), not both: one of them would be ignored" })
  }
  if (o["success"] !== undefined) checkSchema(subject, "`success`", o["success"])
  if (isUnsafeNoSchema(o["args"])) checkUnsafeMode(subject, o["args"].mode)
}

const makeTool = (
  name: string,
  options: ToolOptionsBase & {
    readonly run?: ((args: any, context: ToolContext) => MaybeEffect<unknown, any>) | undefined
    readonly needsApproval?: unknown
  },
  codec: ArgsCodec<unknown>,
  parameters: ToolDefinition["parameters"],
  strict: boolean
): AnyTool => {
  const run = options.run!
  const needsApproval = approvalPredicate(codec.unsafe === "human-approval" ? true : options.needsApproval)
  const definition: ToolDefinition = Object.freeze({
    type: "function",
    name,
    ...(options.description === undefined ? {} : { description: options.description }),
    parameters: deepFreeze(parameters),
    ...(strict ? { strict: true } : {})
  })
  return Object.freeze({
    _tag: "Tool",
    name,
    description: options.description,
    definition,
    codec: Object.freeze(codec),
    [ToolInternals]: Object.freeze({
      execute: (args: unknown, toolCallId: string, idempotencyKey?: string, around?: AroundAnswer, progress?: (data: unknown) => void) =>
        fromMaybeEffect((abortable) => run(args, new CallContext(toolCallId, abortable, idempotencyKey, progress ?? ignoreProgress)), around),
      executeExit: (args: unknown, toolCallId: string, around?: AroundAnswer) =>
        fromMaybeEffectSettled((abortable) => run(args, new CallContext(toolCallId, abortable, undefined, ignoreProgress)), around, settleAsExit),
      needsApproval
    }),
    tags: Object.freeze([...(options.tags ?? [])]),
    // A tool without a Schema is unsafe unless declared otherwise: pre-selection offers it only with consent.
    safe: options.safe ?? codec.validated,
    recover: (options as { readonly recover?: RecoveryHandlers<string, any> }).recover,
    untrustedOutput: options.untrustedOutput === true,
    effect: toolEffect(name, options.effect),
    // As the type says: any `needsApproval` given (even a boolean that is false now) marks the tool.
    mayNeedApproval: needsApproval !== undefined || options.needsApproval !== undefined
  })
}

/** A tool's answer as the Exit `executeExit` resumes with. */
const settleAsExit: Settle<unknown, Exit.Exit<unknown, unknown>, never> = {
  onValue: (value) => Effect.succeed(Exit.succeed(value)),
  onError: (error) => Effect.succeed(Exit.fail(error))
}

/**
 * The `ToolContext` of one call: `signal` is a getter of the class (the AbortController behind it is
 * made on first read), so that making one per call costs a plain object.
 */
class CallContext implements ToolContext {
  // Declared only: an own property exactly when there is a key (as the object literal had it).
  declare readonly idempotencyKey?: string
  readonly #abortable: Abortable

  constructor(readonly toolCallId: string, abortable: Abortable, idempotencyKey: string | undefined, readonly progress: (data: unknown) => void) {
    this.#abortable = abortable
    if (idempotencyKey !== undefined) (this as { idempotencyKey?: string }).idempotencyKey = idempotencyKey
  }

  get signal(): AbortSignal {
    return this.#abortable.signal
  }
}

/** The progress callback of a call nobody hears. */
const ignoreProgress = (_data: unknown): void => undefined

const effectClasses: ReadonlyArray<unknown> = ["readOnly", "idempotent", "mutating"]

const toolEffect = (name: string, option: unknown): ToolEffectClass => {
  if (option === undefined) return defaultToolEffect
  if (!effectClasses.includes(option)) {
    throw new AgentConfigError({ subject: `tool "${name}"`, reason: '`effect` must be "readOnly", "idempotent" or "mutating"' })
  }
  return option as ToolEffectClass
}

const always = () => Effect.succeed(true)

/** The runtime form of `needsApproval`: undefined (never), or an Effect that never fails (a failure means "ask"). */
const approvalPredicate = (option: unknown): ToolInternalsOf<unknown, unknown>["needsApproval"] => {
  if (option === undefined || option === false) return undefined
  if (option === true) return always
  const predicate = option as (args: unknown, context: ApprovalContext) => MaybeEffect<boolean>
  return (args, context) =>
    fromMaybeEffect(() => predicate(args, context)).pipe(
      Effect.map((answer) => answer !== false),
      Effect.catchCause(() => Effect.succeed(true))
    )
}

/**
 * Internal: runs a tool on already-decoded arguments (the loop's way in; not part of the public API).
 * `around` wraps the tool's answer when it is an Effect (the services of the run it belongs to);
 * `progress` receives what the tool reports through its context (`ToolContext.progress`).
 *
 * @example
 * ```ts
 * yield* executeTool(add, { a: 1, b: 2 }, "call_1")
 * ```
 */
export const executeTool = <Args, R>(
  tool: Tool<string, Args, R, any, boolean>,
  args: Args,
  toolCallId: string,
  idempotencyKey?: string,
  around?: AroundAnswer,
  progress?: (data: unknown) => void
): Effect.Effect<R, unknown> => tool[ToolInternals].execute(args, toolCallId, idempotencyKey, around, progress) as Effect.Effect<R, unknown>

/** The `run` of a tool declared without one: looks its implementation up in the run's services. */
const implementedByLayer = (name: string) => {
  const key = toolImplementationKey(name)
  return (args: unknown, context: ToolContext) => Effect.flatMap(Effect.service(key), (handler) => fromMaybeEffect(() => handler(args, context)))
}

const isUnsafeNoSchema = (u: unknown): u is UnsafeNoSchema =>
  typeof u === "object" && u !== null && "_tag" in u && u._tag === "UnsafeNoSchema"

/**
 * True for values built by {@link tool}.
 *
 * @example
 * ```ts
 * isTool(add) // true
 * ```
 */
export const isTool = (u: unknown): u is AnyTool =>
  typeof u === "object" && u !== null && "_tag" in u && u._tag === "Tool"

const deepFreeze = <T>(value: T): T => {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const child of Object.values(value)) deepFreeze(child)
  }
  return value
}
