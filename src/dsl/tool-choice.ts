/**
 * Tool-choice policies: what a skill tells the model about calling tools on each turn. A setting is
 * `"auto"` (the model decides), `"required"` (some tool), `"none"` (no tool), `"output"` (the tool
 * through which the typed answer is submitted) or a tool handle of the skill (that tool). A policy is
 * one setting for every turn, or `{ lastTurn, otherTurns }`: investigate freely, and be made to answer
 * on the last turn the budget's `maxTurns` allows. Without a policy the runtime's default applies
 * (`submit` forced when it is the only tool, a tool required when typed, else `"auto"`).
 */
import { AgentConfigError } from "../errors.ts"
import { isToolHandle } from "./tool-handle.ts"

/**
 * One turn's setting; `H` is the handles that may be forced (a skill's agent's handles).
 *
 * @example
 * ```ts
 * const s: ToolChoiceSetting<never> = "output"
 * ```
 */
export type ToolChoiceSetting<H> = "auto" | "required" | "none" | "output" | H

/**
 * A setting for every turn, or one for the last turn the budget allows and one for the others
 * (`otherTurns` defaults to the runtime's default).
 *
 * @example
 * ```ts
 * skill("search").tools(lookup).output(Slots).toolChoice({ lastTurn: "output", otherTurns: "required" })
 * ```
 */
export type ToolChoicePolicy<H> =
  | ToolChoiceSetting<H>
  | { readonly lastTurn: ToolChoiceSetting<H>; readonly otherTurns?: ToolChoiceSetting<H> }

/** How an agent without skills names a registered tool in its policy (it has no handles). */
export interface ToolByName<TName extends string> {
  readonly tool: TName
}

/** A setting as the runtime keeps it: a tool by name instead of a handle. */
export type ResolvedToolChoice = "auto" | "required" | "none" | "output" | { readonly tool: string }

/** A policy as the runtime keeps it; `undefined` fields mean the runtime's default. */
export interface ResolvedToolChoicePolicy {
  readonly lastTurn: ResolvedToolChoice | undefined
  readonly otherTurns: ResolvedToolChoice | undefined
}

const keywords: ReadonlyArray<string> = ["auto", "required", "none", "output"]

/**
 * Checks an untyped policy and resolves its handles to tool names. `allowed` are the names of the
 * skill's tools; `typed` tells whether the skill has a typed answer (for `"output"`); `byName` accepts
 * `{ tool: name }` (an agent without skills has no handles). Anything else
 * ends in an `AgentConfigError` naming `subject`.
 *
 * @example
 * ```ts
 * resolveToolChoice("skill \"s\"", "output", { allowed: [], typed: true }) // { lastTurn: undefined, otherTurns: "output" }
 * ```
 */
export const resolveToolChoice = (
  subject: string,
  policy: unknown,
  context: { readonly allowed: ReadonlyArray<string>; readonly typed: boolean; readonly registry?: symbol; readonly byName?: boolean }
): ResolvedToolChoicePolicy => {
  const fail = (reason: string) => new AgentConfigError({ subject, reason: `.toolChoice(...): ${reason}` })
  const one = (setting: unknown): ResolvedToolChoice => {
    if (typeof setting === "string") {
      if (!keywords.includes(setting)) throw fail(`${JSON.stringify(setting)} is not a choice: use "auto", "required", "none", "output" or a tool handle of the skill`)
      if (setting === "output" && !context.typed) throw fail(`"output" forces the typed answer, but this skill has no output Schema`)
      return setting as ResolvedToolChoice
    }
    if (context.byName === true && typeof setting === "object" && setting !== null && "tool" in setting && !isToolHandle(setting)) {
      const name = (setting as { readonly tool: unknown }).tool
      if (typeof name !== "string" || Object.keys(setting).length !== 1 || !context.allowed.includes(name)) {
        throw fail(`${typeof name === "string" ? `{ tool: ${JSON.stringify(name)} }` : "{ tool } with a name that is not a string"} does not name a registered tool (register it with .tools(...) first)`)
      }
      return Object.freeze({ tool: name })
    }
    if (isToolHandle(setting)) {
      const name = setting.tool.name
      if ((context.registry !== undefined && setting.registry !== context.registry) || !context.allowed.includes(name)) {
        throw fail(`the tool "${name}" is not one of this skill's tools`)
      }
      return Object.freeze({ tool: name })
    }
    throw fail(`"auto", "required", "none", "output", a tool handle of the skill, or { lastTurn, otherTurns }`)
  }
  if (typeof policy === "object" && policy !== null && !isToolHandle(policy) && !(context.byName === true && "tool" in policy)) {
    const keys = Object.keys(policy)
    const extra = keys.filter((k) => k !== "lastTurn" && k !== "otherTurns")
    if (extra.length > 0 || !("lastTurn" in policy)) throw fail(`a per-turn policy is { lastTurn, otherTurns? }, got keys ${JSON.stringify(keys)}`)
    const p = policy as { readonly lastTurn: unknown; readonly otherTurns?: unknown }
    return Object.freeze({ lastTurn: one(p.lastTurn), otherTurns: p.otherTurns === undefined ? undefined : one(p.otherTurns) })
  }
  return Object.freeze({ lastTurn: undefined, otherTurns: one(policy) })
}
