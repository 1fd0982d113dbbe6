/**
 * Chooses the skill that handles a run: the only one, the first whose `.when(...)` accepts the input,
 * or the one without a predicate as the fallback. An agent without skills gets an implicit skill that
 * may use every registered tool.
 */
import { Effect } from "effect"
import type { AgentDefinition, SkillDefinition } from "../dsl/agent-definition.ts"
import type { SkillChosenEvent } from "../dsl/events.ts"
import { NoSkillMatched } from "../errors.ts"

/** The chosen skill and how it was chosen. */
export interface ChosenSkill {
  readonly skill: SkillDefinition
  readonly how: SkillChosenEvent["how"]
}

export const chooseSkill = (definition: AgentDefinition, input: string): Effect.Effect<ChosenSkill, NoSkillMatched> => {
  const skills = definition.skills
  if (skills.length === 0) {
    const implicit: SkillDefinition = {
      name: definition.name,
      description: "",
      tools: definition.tools,
      implementation: undefined,
      predicate: undefined
    }
    return Effect.succeed({ skill: implicit, how: "implicit" })
  }
  if (skills.length === 1 && skills[0]!.predicate === undefined) return Effect.succeed({ skill: skills[0]!, how: "only" })
  const matched = skills.find((s) => s.predicate !== undefined && s.predicate(input))
  if (matched !== undefined) return Effect.succeed({ skill: matched, how: "predicate" })
  const fallback = skills.find((s) => s.predicate === undefined)
  if (fallback !== undefined) return Effect.succeed({ skill: fallback, how: "fallback" })
  return Effect.fail(new NoSkillMatched({ agent: definition.name, skills: skills.map((s) => s.name) }))
}
