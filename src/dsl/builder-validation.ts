/**
 * Checks on what untyped callers (plain JavaScript, `any`) hand the agent builder and `tool(...)`, at
 * construction: a listener that is not a function, a model that is not a `ModelClient`, an option
 * nobody reads. Each ends in an `AgentConfigError` naming the method or option, with a suggestion when
 * the name is a known old one (`tool({ onError })` → `recover`) or a near miss (`maxTurn` →
 * `maxTurns`). Typed callers never reach these errors: the types refuse the same mistakes.
 */
import * as Schema from "effect/Schema"
import { AgentConfigError } from "../errors.ts"
import { editDistance } from "./repair-arguments.ts"
import { shownValue } from "../internal/shown-value.ts"

/** What was handed over, for a message: `a string`, `an object`, `null`, `a Map`, `a Promise`, `a skill`. */
export const kindOf = (u: unknown): string =>
  u === null ? "null"
  : Array.isArray(u) ? "an array"
  : u instanceof Map ? "a Map"
  : isThenable(u) ? "a Promise"
  : typeof u === "object" && (u as { _tag?: unknown })._tag === "Skill" ? "a skill"
  : typeof u === "object" && (u as { _tag?: unknown })._tag === "Tool" ? `the tool "${String((u as { name?: unknown }).name)}"`
  : typeof u === "object" ? "an object"
  : `${/^[aeiou]/.test(typeof u) ? "an" : "a"} ${typeof u}`

const isThenable = (u: unknown): boolean =>
  typeof u === "object" && u !== null && typeof (u as { then?: unknown }).then === "function"

/** ` (did you mean \`x\`?)` for the closest of `known` within two edits of `name`, else "". */
export const nearMiss = (name: string, known: ReadonlyArray<string>): string => {
  let best: string | undefined
  let distance = 3
  for (const candidate of known) {
    const d = editDistance(name.toLowerCase(), candidate.toLowerCase())
    if (d < distance) (best = candidate), (distance = d)
  }
  return best === undefined ? "" : ` (did you mean \`${best}\`?)`
}

/**
 * Refuses keys of `options` outside `known`. `renamed` maps old or foreign names to the advice given
 * instead of a near miss (`{ onError: "recovery is \`recover\`: ..." }`).
 *
 * @example
 * ```ts
 * checkOptions(`tool "t"`, "tool(...)", { descripton: "x" }, ["description", "run"])
 * // AgentConfigError: Invalid tool "t": unknown option `descripton` of tool(...) (did you mean `description`?)
 * ```
 */
export const checkOptions = (
  subject: string,
  where: string,
  options: unknown,
  known: ReadonlyArray<string>,
  renamed: Readonly<Record<string, string>> = {}
): void => {
  if (options === undefined) return
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new AgentConfigError({ subject, reason: `${where} takes an object of options, got ${kindOf(options)}` })
  }
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue
    const advice = Object.hasOwn(renamed, key) ? ` (${renamed[key]})` : nearMiss(key, known)
    throw new AgentConfigError({ subject, reason: `unknown option \`${key}\` of ${where}${advice}; known: ${known.join(", ")}` })
  }
}

/**
 * Refuses a listener (or any callback) that is not a function; `advice` is added when given.
 *
 * @example
 * ```ts
 * checkFunction(`agent "a"`, ".onError(...)", { invalidArgs }, "did you mean `recover`? .onError only observes failed runs")
 * ```
 */
export const checkFunction = (subject: string, where: string, value: unknown, advice?: string): void => {
  if (typeof value === "function") return
  throw new AgentConfigError({ subject, reason: `${where} takes a function, got ${kindOf(value)}${advice === undefined ? "" : ` (${advice})`}` })
}

/** The advice for a listener method handed something else, by method: the method meant instead. */
export const listenerAdvice: Readonly<Record<string, (value: unknown) => string | undefined>> = {
  onError: (value) =>
    typeof value === "object" && value !== null
      ? "did you mean `recover`? `.recover({ invalidArgs, executionError })` decides recovery; `.onError(error => ...)` only observes failed runs"
      : undefined,
  onToolError: () => "to decide recovery for one tool, use `.recoverTool(name, { executionError })`; `.onToolError(event => ...)` observes every tool failure",
  onInvalidArgs: () => "to decide recovery for one tool, use `.recoverTool(name, { invalidArgs })`; `.onInvalidArgs(event => ...)` observes"
}

/**
 * Refuses a model that is not a `ModelClient` (an object with a `chat` method).
 *
 * @example
 * ```ts
 * checkModel(`agent "a"`, { name: "gpt-4o" }) // AgentConfigError: … `.model(...)` takes a ModelClient …
 * ```
 */
export const checkModel = (subject: string, client: unknown): void => {
  if (typeof client === "object" && client !== null && typeof (client as { chat?: unknown }).chat === "function") return
  throw new AgentConfigError({
    subject,
    reason: `\`.model(...)\` takes a ModelClient (an object with a \`chat(request)\` method, e.g. openai("gpt-4o-mini")), got ${kindOf(client)}`
  })
}

/**
 * Refuses a prompt that is not a string.
 *
 * @example
 * ```ts
 * checkString(`agent "a"`, ".prompt(...)", 42) // AgentConfigError: … `.prompt(...)` takes a string, got a number
 * ```
 */
export const checkString = (subject: string, where: string, value: unknown): void => {
  if (typeof value === "string") return
  throw new AgentConfigError({ subject, reason: `${where} takes a string, got ${kindOf(value)}` })
}

/**
 * Refuses a value outside `allowed`.
 *
 * @example
 * ```ts
 * checkOneOf(`agent "a"`, ".disallowedToolPolicy(...)", "ignore", ["fail", "feedback"]) // … takes "fail" or "feedback", got "ignore"
 * ```
 */
export const checkOneOf = (subject: string, where: string, value: unknown, allowed: ReadonlyArray<string>): void => {
  if (typeof value === "string" && allowed.includes(value)) return
  const shown = typeof value === "string" ? JSON.stringify(value) : kindOf(value)
  throw new AgentConfigError({ subject, reason: `${where} takes ${allowed.map((a) => JSON.stringify(a)).join(" or ")}, got ${shown}` })
}

/**
 * Refuses a value that is not `true` or `false` (a string `"false"` would otherwise read as true).
 *
 * @example
 * ```ts
 * checkBoolean(`tool "t"`, "`safe`", "false") // AgentConfigError: … `safe` must be true or false, got a string
 * ```
 */
export const checkBoolean = (subject: string, where: string, value: unknown): void => {
  if (typeof value === "boolean") return
  throw new AgentConfigError({ subject, reason: `${where} must be true or false, got ${kindOf(value)}` })
}

/**
 * Refuses a value that is not an Effect Schema (a JSON Schema object, a type name as a string).
 *
 * @example
 * ```ts
 * checkSchema(`agent "a"`, "`output`", { type: "object" }) // … `output` must be an Effect Schema (Schema.Struct({...}), Schema.String…), got an object
 * ```
 */
export const checkSchema = (subject: string, where: string, value: unknown): void => {
  if (Schema.isSchema(value)) return
  throw new AgentConfigError({ subject, reason: `${where} must be an Effect Schema (Schema.Struct({ ... }), Schema.String, ...), got ${kindOf(value)}` })
}

/**
 * Refuses a record of tools given as anything else: an array, a Map, one tool, nothing.
 *
 * @example
 * ```ts
 * checkToolRecord(`agent "a"`, [add]) // … .tools(...) takes a record of tools keyed by their names: .tools({ add, multiply }), got an array
 * ```
 */
export const checkToolRecord = (subject: string, tools: unknown): void => {
  const kind = kindOf(tools)
  if (kind === "an object") return
  const advice = kind.startsWith("the tool ") ? `: write .tools({ ${String((tools as { name: unknown }).name)} })` : ""
  throw new AgentConfigError({ subject, reason: `.tools(...) takes a record of tools keyed by their names, .tools({ add, multiply }); got ${kind}${advice}` })
}

/**
 * Refuses what `.skills(...)`'s callback returned unless it is a non-empty array (of skills, checked one by one later).
 *
 * @example
 * ```ts
 * checkSkillList(`agent "a"`, skill("s").tools(add)) // … .skills(...) must return an array of skills, [skill(...)], got a skill
 * ```
 */
export const checkSkillList = (subject: string, skills: unknown): void => {
  if (!Array.isArray(skills)) {
    throw new AgentConfigError({ subject, reason: `.skills(...) must return an array of skills, .skills(({ add }) => [skill("s").tools(add)]); got ${kindOf(skills)}` })
  }
  if (skills.length === 0) {
    throw new AgentConfigError({
      subject,
      reason: ".skills(...) returned no skills: return at least one, or leave .skills(...) out for the one implicit skill that may use every registered tool"
    })
  }
}

/**
 * Refuses a memory store that is not a `MemoryStore` (an object with `read`, `write` and `search` methods).
 *
 * @example
 * ```ts
 * checkMemoryStore(`agent "a"`, ".memory(...)", "notes") // … .memory(...) takes a MemoryStore …, got a string
 * ```
 */
export const checkMemoryStore = (subject: string, where: string, store: unknown): void => {
  const methods = ["read", "write", "search"]
  if (typeof store === "object" && store !== null && methods.every((m) => typeof (store as Record<string, unknown>)[m] === "function")) return
  throw new AgentConfigError({
    subject,
    reason: `${where} takes a MemoryStore (an object with read, write, search methods, e.g. inMemoryStore()), or nothing for a new in-memory one; got ${kindOf(store)}`
  })
}

/** The options of `agent(name, options)`. */
export const agentOptionKeys: ReadonlyArray<string> = ["input", "output"]

/** The keys of `.budget({...})`. */
export const budgetOptionKeys: ReadonlyArray<string> = [
  "maxTurns", "maxToolCalls", "maxDuration", "perToolTimeout", "maxTokens", "maxConsecutiveSameTool", "hookTimeout", "maxToolArgsBytes", "toolConcurrency"
]

/** The keys of `.recover({...})` and, without `maxRepairSteps`, of `.recoverTool(name, {...})` and a tool's `recover`. */
export const recoveryKeys: ReadonlyArray<string> = ["invalidArgs", "executionError"]

/** Names from other libraries and older versions, and what to use instead. */
export const recoveryRenamed: Readonly<Record<string, string>> = {
  toolFailed: "did you mean `executionError`?",
  onError: "did you mean `executionError`?"
}

/** The keys of `.pickTools({...})`. */
export const pickToolsOptionKeys: ReadonlyArray<string> = ["maxCandidates", "minScore", "allowUnsafe", "scorer", "timeoutMs", "debug"]

/** The keys of `.asTool({...})`. */
export const asToolOptionKeys: ReadonlyArray<string> = ["name", "description", "strict"]

/** Every option some form of `tool(name, {...})` reads. */
export const toolOptionKeys: ReadonlyArray<string> = [
  "description", "tags", "safe", "untrustedOutput", "effect", "needsApproval", "args", "parameters", "success", "recover", "run", "strict", "repair"
]

/** Old or foreign tool options, and what to use instead. */
export const toolOptionRenamed: Readonly<Record<string, string>> = {
  onError: "did you mean `recover`? a tool's recovery handlers are `recover: { invalidArgs, executionError }`",
  execute: "did you mean `run`?",
  handler: "did you mean `run`?",
  inputSchema: "did you mean `args` (an Effect Schema) or `parameters` (a JSON Schema)?",
  schema: "did you mean `args` (an Effect Schema) or `parameters` (a JSON Schema)?"
}

/**
 * `.recover({...})` (`withSteps`) and `.recoverTool(name, {...})`: known keys, handlers that are
 * functions, `maxRepairSteps` a whole number in [1, 100].
 *
 * @example
 * ```ts
 * checkRecovery(`agent "a"`, ".recover(...)", { invalidArg: () => Recovery.retry }, true) // did you mean `invalidArgs`?
 * ```
 */
export const checkRecovery = (subject: string, where: string, policy: unknown, withSteps: boolean): void => {
  const known = withSteps ? [...recoveryKeys, "maxRepairSteps"] : recoveryKeys
  if (policy === undefined) throw new AgentConfigError({ subject, reason: `${where} takes an object of handlers (${recoveryKeys.join(", ")})` })
  checkOptions(subject, where, policy, known, recoveryRenamed)
  const handlers = policy as Record<string, unknown>
  for (const key of recoveryKeys) {
    if (handlers[key] !== undefined) checkFunction(subject, `${where}'s \`${key}\``, handlers[key])
  }
  const steps = handlers["maxRepairSteps"]
  if (steps !== undefined && !(typeof steps === "number" && Number.isInteger(steps) && steps >= 1 && steps <= 100)) {
    throw new AgentConfigError({ subject, reason: `maxRepairSteps must be a whole number in [1, 100], got ${shownValue(steps)}` })
  }
}

/**
 * `.pickTools({...})`: known keys, and numbers in range.
 *
 * @example
 * ```ts
 * checkPickTools(`agent "a"`, { maxCandidates: 0 }) // AgentConfigError: … pickTools maxCandidates must be …
 * ```
 */
export const checkPickTools = (subject: string, options: unknown): void => {
  checkOptions(subject, ".pickTools(...)", options, pickToolsOptionKeys)
  const fail = (reason: string) => new AgentConfigError({ subject, reason: `pickTools ${reason}` })
  const { maxCandidates, minScore, timeoutMs } = (options ?? {}) as Record<string, unknown>
  if (maxCandidates !== undefined && !(Number.isInteger(maxCandidates) && (maxCandidates as number) >= 1)) throw fail(`maxCandidates must be a whole number >= 1, got ${shownValue(maxCandidates)}`)
  if (minScore !== undefined && !Number.isFinite(minScore)) throw fail(`minScore must be a finite number, got ${shownValue(minScore)}`)
  if (timeoutMs !== undefined && !(typeof timeoutMs === "number" && timeoutMs > 0)) throw fail(`timeoutMs must be a positive number of milliseconds, got ${shownValue(timeoutMs)}`)
  const { scorer, debug, allowUnsafe } = (options ?? {}) as Record<string, unknown>
  if (scorer !== undefined) checkFunction(subject, ".pickTools(...)'s `scorer`", scorer, "(input, tool) => score in [0, 1]")
  if (debug !== undefined) checkFunction(subject, ".pickTools(...)'s `debug`", debug, "(line) => void")
  if (allowUnsafe !== undefined && typeof allowUnsafe !== "boolean") throw fail(`allowUnsafe must be true or false, got ${kindOf(allowUnsafe)}`)
}
