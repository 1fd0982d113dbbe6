/**
 * Tool handles: what `.skills(...)` hands to its callback, one per registered tool. A handle carries
 * the agent's name in its type, so a skill built from another agent's handles does not compile, and a
 * registration token at run time, so untyped callers get a construction error instead.
 */
import type { AnyTool } from "./tool.ts"

declare const agentBrand: unique symbol

/**
 * A registered tool, as seen by the skills of agent `TAgent`.
 *
 * @example
 * ```ts
 * agent("calc").tools({ add }).skills(({ add }) => [skill("compute").tools(add)]) // add: ToolHandle<"calc", typeof add>
 * ```
 */
export interface ToolHandle<TAgent extends string, TTool extends AnyTool> {
  readonly _tag: "ToolHandle"
  readonly tool: TTool
  /** Identifies the agent definition the handle was issued by. */
  readonly registry: symbol
  /** Phantom: records the owning agent in the type. */
  readonly [agentBrand]?: TAgent
}

/** Any handle, whatever agent and tool. */
export type AnyToolHandle = ToolHandle<string, AnyTool>

/** The agent a handle (or union of handles) belongs to. */
export type HandleAgent<H> = H extends ToolHandle<infer A, any> ? A : never

/** The record of handles that `.skills(...)` receives: one per registered tool, keyed like `.tools(...)`. */
export type ToolHandles<TAgent extends string, TTools extends Record<string, AnyTool>> = SkillHandles<
  RegisterFirst,
  TAgent,
  TTools
>

/** What the compiler shows when a skill asks for a handle that `.skills(...)` did not receive. */
export type RegisterFirst = "only tools registered with .tools(...) before .skills(...) have handles here"

/**
 * {@link ToolHandles} as `.skills(...)` declares it. `Hint` is unused at run time and comes first so
 * that it survives the compiler's truncation: a skill that asks for an unregistered tool reads
 * "Property 'shout' does not exist on type 'SkillHandles<"only tools registered with .tools(...) before
 * .skills(...) have handles here", "calc", …>'".
 */
// eslint-disable-next-line @typescript-eslint/no-unused-vars
export type SkillHandles<Hint extends string, TAgent extends string, TTools extends Record<string, AnyTool>> = {
  readonly [K in keyof TTools]: ToolHandle<TAgent, TTools[K]>
}

/** Issues the handles of one registration. */
export const makeHandles = <TAgent extends string, TTools extends Record<string, AnyTool>>(
  tools: TTools,
  registry: symbol
): ToolHandles<TAgent, TTools> => {
  const handles: Record<string, AnyToolHandle> = {}
  for (const [key, tool] of Object.entries(tools)) handles[key] = Object.freeze({ _tag: "ToolHandle", tool, registry })
  return Object.freeze(handles) as ToolHandles<TAgent, TTools>
}

/** True for values issued by {@link makeHandles}. */
export const isToolHandle = (u: unknown): u is AnyToolHandle =>
  typeof u === "object" && u !== null && "_tag" in u && u._tag === "ToolHandle"
