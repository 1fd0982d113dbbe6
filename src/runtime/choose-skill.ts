/**
 * Chooses the skill that handles a run: the only one; else the first whose `.when(...)` accepts the
 * input; else the one skill without a predicate; else, among several skills without predicates, the
 * model's choice through a forced `choose_skill` tool call (one turn of the budget). An agent without
 * skills gets an implicit skill that may use every registered tool.
 */
import { Effect, Result, Schema } from "effect"
import type { AgentDefinition, SkillDefinition } from "../dsl/agent-definition.ts"
import type { SkillChosenEvent } from "../dsl/events.ts"
import { isBuiltinToolName } from "../dsl/builtin-tools.ts"
import { tool } from "../dsl/tool.ts"
import { type ModelError, NoSkillMatched, SkillRoutingFailed } from "../errors.ts"
import type { ModelClientService } from "../model/model-client.ts"
import { callModel } from "./call-model.ts"
import { emit, reportHookFailure } from "./emit.ts"
import { agentPreamble, namedList } from "./prompt.ts"
import { noStackTrace } from "../internal/span-options.ts"

/** The chosen skill, how it was chosen, and the turns that cost (1 when the model chose). */
export interface ChosenSkill {
  readonly skill: SkillDefinition
  readonly how: SkillChosenEvent["how"]
  readonly turns: number
}

/** The skill name used in hooks and spans for the routing call. */
export const routingScope = "(routing)"

export const chooseSkill = (
  definition: AgentDefinition,
  runId: string,
  input: string
): Effect.Effect<ChosenSkill, NoSkillMatched | SkillRoutingFailed | ModelError, ModelClientService> => {
  const skills = definition.skills
  if (skills.length === 0) {
    const implicit: SkillDefinition = {
      name: definition.name,
      description: "",
      // Built-in tools are callable only in skills that list them.
      tools: definition.tools.filter((t) => !isBuiltinToolName(t.name)),
      implementation: undefined,
      predicate: undefined,
      knowledge: [],
      output: undefined
    }
    return Effect.succeed({ skill: implicit, how: "implicit", turns: 0 })
  }
  if (skills.length === 1 && skills[0]!.predicate === undefined) return Effect.succeed({ skill: skills[0]!, how: "only", turns: 0 })
  return Effect.gen(function*() {
    for (const skill of skills) {
      if (skill.predicate !== undefined && (yield* accepts(definition, runId, skill.predicate, input))) {
        return { skill, how: "predicate" as const, turns: 0 }
      }
    }
    const fallbacks = skills.filter((s) => s.predicate === undefined)
    if (fallbacks.length === 1) return { skill: fallbacks[0]!, how: "fallback" as const, turns: 0 }
    if (fallbacks.length === 0) return yield* new NoSkillMatched({ agent: definition.name, skills: skills.map((s) => s.name) })
    return yield* routeByModel(definition, runId, input, fallbacks)
  })
}

/** A predicate's verdict; one that throws is reported (as a `SkillChosen` hook failure) and counts as "no". */
const accepts = (definition: AgentDefinition, runId: string, predicate: (input: string) => boolean, input: string) =>
  Effect.try({ try: () => predicate(input) === true, catch: (error) => error }).pipe(
    Effect.catch((error) => reportHookFailure(definition, runId, "SkillChosen", error).pipe(Effect.as(false)))
  )

/**
 * The `choose_skill` tool for a set of candidates. The candidates depend only on the agent's skills,
 * so the tool (and its JSON Schema) is built once per skill list, not on every routed run.
 */
const choosers = new WeakMap<ReadonlyArray<SkillDefinition>, ReturnType<typeof makeChooser>>()
const makeChooser = (names: ReadonlyArray<string>) =>
  tool("choose_skill", {
    description: "Choose the skill that should handle the user's request.",
    args: Schema.Struct({ skill: Schema.Literals(names).annotate({ description: "the name of the chosen skill" }) }),
    run: ({ skill }) => skill
  })
const chooserFor = (skills: ReadonlyArray<SkillDefinition>, names: ReadonlyArray<string>) => {
  const cached = choosers.get(skills)
  if (cached !== undefined) return cached
  const chooser = makeChooser(names)
  choosers.set(skills, chooser)
  return chooser
}

const routeByModel = (definition: AgentDefinition, runId: string, input: string, candidates: ReadonlyArray<SkillDefinition>) =>
  Effect.gen(function*() {
    const names = candidates.map((s) => s.name)
    const chooser = chooserFor(definition.skills, names)
    const scope = { agent: definition.name, runId, skill: routingScope, turn: 1 }
    yield* emit(definition, { _tag: "Turn", ...scope })
    const response = yield* callModel(definition, scope, {
      messages: [
        { role: "system", content: `${agentPreamble(definition)}\n\nChoose the skill that should handle the user's request:\n${namedList(candidates)}` },
        { role: "user", content: input }
      ],
      tools: [chooser.definition],
      toolChoice: { tool: chooser.name }
    })
    const fail = (reason: string) => new SkillRoutingFailed({ agent: definition.name, candidates: names, reason })
    if (response._tag !== "ToolCalls") return yield* fail("the model answered text instead of choosing")
    const call = response.calls.find((c) => c.name === chooser.name)
    if (call === undefined) return yield* fail(`the model called ${response.calls.map((c) => c.name).join(", ") || "nothing"} instead of choose_skill`)
    if (chooser.validation._tag !== "Schema") return yield* fail("internal: the chooser has no Schema")
    const decoded = chooser.validation.decode(call.arguments)
    if (Result.isFailure(decoded)) return yield* fail(`invalid choice:\n${decoded.failure}`)
    const skill = candidates.find((s) => s.name === decoded.success.skill)!
    return { skill, how: "model" as const, turns: 1 }
  }).pipe(Effect.withSpan("agent.route", { attributes: { "agent.name": definition.name, "agent.skills": candidates.length } }, noStackTrace))
