/**
 * Composition overhead, per child run, in every library. A child agent answers in one model call.
 * Measured, all in the same interleaved rounds:
 * - the child run directly;
 * - a parent whose model calls the child as a tool three times (one per turn), beside the same parent
 *   calling a plain async tool with the same answer: (difference) ÷ 3 is the cost of a child run
 *   through the agent-as-tool form. Ours: `child.asTool(...)`; `@openai/agents`: `agent.asTool(...)`;
 *   `ai` 6: a tool whose `execute` calls `generateText` with the child's model (the pattern of its
 *   subagents docs; the child has no tools of its own here);
 *   `@mastra/core`: the child in the parent's `agents` (its subagent tool, `agent-<key>` with `{ prompt }`;
 *   the child also gets the parent's conversation as context, as Mastra sends it);
 * - three such agents in a chain (the output of one the input of the next): ours as a `pipeline`, Mastra
 *   as a workflow of `createStep(agent)` steps joined by `.map` (an agent step runs `agent.stream`, so
 *   its stages' model also streams the same one answer), and in every library by hand.
 * The models are the calculator's mocks over two scenarios (the parent's three `ask` calls, the child's
 * one answer); every subject is checked once before timing (answer, model calls, tool runs).
 */
import type { LanguageModelV3, LanguageModelV3StreamPart } from "@ai-sdk/provider"
import { Agent as MastraAgent } from "@mastra/core/agent"
import { createTool } from "@mastra/core/tools"
import { createStep, createWorkflow } from "@mastra/core/workflows"
import { Agent, run, tool as agentsTool } from "@openai/agents"
import { generateText, stepCountIs, tool as aiTool, zodSchema } from "ai"
import { Schema } from "effect"
import { z } from "zod"
import { ScriptedModel } from "./calculator/openai-agents.ts"
import { type Counters, type Harness, mockModel, type Scenario } from "./calculator/script.ts"
import { plainModel } from "./calculator/vercel-ai.ts"
import { interleavedRounds, show, type Timed } from "./measure.ts"
import { ours } from "./ours-lib.ts"

const { agent, ModelClient, pipeline, tool } = ours
const childCalls = 3
const stageCount = 3
const childAnswer = "child answer"
const parentPrompt = "Ask the child."
const childPrompt = "Answer briefly."

/** The parent's model: `childCalls` turns calling `tool` with the question as `argument`, then "done". */
const parentCalling = (tool: string, argument: string): Scenario => ({
  name: "parent",
  turns: childCalls,
  step: (i) => (i < childCalls ? { tool, args: { [argument]: `question ${i}` } } : undefined),
  finalAnswer: "done"
})
const parentScenario = parentCalling("ask", "input")
/** The child's model: one answer, no tool. */
const childScenario: Scenario = { name: "child", turns: 0, step: () => undefined, finalAnswer: childAnswer }

/** What one library runs; `counters` of the parent (its model calls, the plain tool's runs) and of the children (their model calls). */
interface Subjects {
  readonly direct: () => Promise<string>
  readonly plainTool: () => Promise<string>
  readonly asTool: () => Promise<string>
  readonly byHand: () => Promise<string>
  readonly pipeline?: () => Promise<string>
}
type MakeSubjects = (parent: Harness, children: Harness) => Subjects

const oursSubjects: MakeSubjects = (parent, children) => {
  const child = (name: string) => agent(name).prompt(childPrompt).model(ModelClient.fromFunction(mockModel(childScenario, children)))
  const parentAgent = () => agent("parent").prompt(parentPrompt).model(ModelClient.fromFunction(mockModel(parentScenario, parent))).budget({ maxTurns: childCalls + 2 })
  const direct = child("child")
  const viaTool = parentAgent().tools({ ask: direct.asTool({ name: "ask", description: "Ask the child" }) })
  const ask = tool("ask", {
    description: "Ask the child",
    args: Schema.Struct({ input: Schema.String }),
    run: async () => {
      parent.counters.toolRuns++
      return childAnswer
    }
  })
  const plainTool = parentAgent().tools({ ask })
  const stages = [child("a"), child("b"), child("c")] as const
  const piped = pipeline("three", stages[0], stages[1], stages[2])
  return {
    direct: () => direct.run("question"),
    plainTool: () => plainTool.run("go"),
    asTool: () => viaTool.run("go"),
    byHand: async () => {
      let value = "go"
      for (const stage of stages) value = await stage.run(value)
      return value
    },
    pipeline: () => piped.run("go")
  }
}

const aiSubjects: MakeSubjects = (parent, children) => {
  const childModel = plainModel(childScenario, children)
  const parentModel = plainModel(parentScenario, parent)
  const inputSchema = zodSchema(z.object({ input: z.string() }))
  const stopWhen = stepCountIs(childCalls + 2)
  const askChild = aiTool({
    description: "Ask the child",
    inputSchema,
    execute: async ({ input }) => (await generateText({ model: childModel, system: childPrompt, prompt: input })).text
  })
  const askPlain = aiTool({
    description: "Ask the child",
    inputSchema,
    execute: async () => {
      parent.counters.toolRuns++
      return childAnswer
    }
  })
  const stageModels = [plainModel(childScenario, children), plainModel(childScenario, children), plainModel(childScenario, children)]
  return {
    direct: async () => (await generateText({ model: childModel, system: childPrompt, prompt: "question" })).text,
    plainTool: async () => (await generateText({ model: parentModel, system: parentPrompt, prompt: "go", tools: { ask: askPlain }, stopWhen })).text,
    asTool: async () => (await generateText({ model: parentModel, system: parentPrompt, prompt: "go", tools: { ask: askChild }, stopWhen })).text,
    byHand: async () => {
      let value = "go"
      for (const model of stageModels) value = (await generateText({ model, system: childPrompt, prompt: value })).text
      return value
    }
  }
}

const agentsSubjects: MakeSubjects = (parent, children) => {
  const child = (name: string) => new Agent({ name, instructions: childPrompt, model: new ScriptedModel(childScenario, children) })
  const parentAgent = (ask: ReturnType<typeof agentsTool>) =>
    new Agent({ name: "parent", instructions: parentPrompt, model: new ScriptedModel(parentScenario, parent), tools: [ask] })
  const direct = child("child")
  const viaTool = parentAgent(direct.asTool({ toolName: "ask", toolDescription: "Ask the child" }))
  const plainTool = parentAgent(agentsTool({
    name: "ask",
    description: "Ask the child",
    parameters: z.object({ input: z.string() }),
    execute: async () => {
      parent.counters.toolRuns++
      return childAnswer
    }
  }))
  const stages = [child("a"), child("b"), child("c")]
  const maxTurns = childCalls + 2
  return {
    direct: async () => String((await run(direct, "question")).finalOutput),
    plainTool: async () => String((await run(plainTool, "go", { maxTurns })).finalOutput),
    asTool: async () => String((await run(viaTool, "go", { maxTurns })).finalOutput),
    byHand: async () => {
      let value = "go"
      for (const stage of stages) value = String((await run(stage, value)).finalOutput)
      return value
    }
  }
}

/** The child's plain model that also streams its reply (the same `doGenerate` answer as one text delta). */
const streamingChildModel = (children: Harness): LanguageModelV3 => {
  const model = plainModel(childScenario, children)
  return {
    ...model,
    doStream: async (options) => {
      const { content, finishReason, usage } = await model.doGenerate(options)
      const text = content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("")
      const parts: ReadonlyArray<LanguageModelV3StreamPart> = [
        { type: "stream-start", warnings: [] },
        { type: "text-start", id: "t" },
        { type: "text-delta", id: "t", delta: text },
        { type: "text-end", id: "t" },
        { type: "finish", finishReason, usage }
      ]
      return {
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part)
            controller.close()
          }
        })
      }
    }
  }
}

/** Mastra names a subagent's tool `agent-<key>` and gives it `{ prompt }`; its parent's model calls that. */
const mastraParentScenario = parentCalling("agent-ask", "prompt")

const mastraSubjects: MakeSubjects = (parent, children) => {
  const child = (id: string, model: LanguageModelV3 = plainModel(childScenario, children)) =>
    new MastraAgent({ id, name: id, description: "Ask the child", instructions: childPrompt, model })
  const parentAgent = (links: Pick<ConstructorParameters<typeof MastraAgent>[0], "agents" | "tools">) =>
    new MastraAgent({ id: "parent", name: "parent", instructions: parentPrompt, model: plainModel(mastraParentScenario, parent), ...links })
  const maxSteps = childCalls + 2
  const direct = child("child")
  const viaAgents = parentAgent({ agents: { ask: direct } })
  const ask = createTool({
    id: "agent-ask",
    description: "Ask the child",
    inputSchema: z.object({ prompt: z.string() }),
    execute: async () => {
      parent.counters.toolRuns++
      return childAnswer
    }
  })
  const plainTool = parentAgent({ tools: { "agent-ask": ask } })
  const stages = [child("a"), child("b"), child("c")]
  const toPrompt = async ({ inputData }: { readonly inputData: { readonly text: string } }) => ({ prompt: inputData.text })
  const [first, second, third] = ["a", "b", "c"].map((id) => createStep(child(id, streamingChildModel(children))))
  const workflow = createWorkflow({ id: "three", inputSchema: z.object({ prompt: z.string() }), outputSchema: z.object({ text: z.string() }) })
    .then(first!)
    .map(toPrompt)
    .then(second!)
    .map(toPrompt)
    .then(third!)
    .commit()
  return {
    direct: async () => (await direct.generate("question")).text,
    plainTool: async () => (await plainTool.generate("go", { maxSteps })).text,
    asTool: async () => (await viaAgents.generate("go", { maxSteps })).text,
    byHand: async () => {
      let value = "go"
      for (const stage of stages) value = (await stage.generate(value)).text
      return value
    },
    pipeline: async () => {
      const result = await (await workflow.createRun()).start({ inputData: { prompt: "go" } })
      return result.status === "success" ? result.result.text : result.status
    }
  }
}

const libraries: ReadonlyArray<{ readonly name: string; readonly make: MakeSubjects }> = [
  { name: "effect-agent-dsl (ours)", make: oursSubjects },
  { name: "ai 6 (zodSchema())", make: aiSubjects },
  { name: "@openai/agents 0.14", make: agentsSubjects },
  { name: "@mastra/core 1.71 (agents: {…}; workflow)", make: mastraSubjects }
]

/** Runs `runOnce` and checks its answer and what the parent's and the children's mocks counted. */
const check = async (what: string, runOnce: () => Promise<string>, counters: { parent: Counters; children: Counters }, expected: {
  readonly answer: string
  readonly parentCalls: number
  readonly toolRuns: number
  readonly childCalls: number
}) => {
  const before = { parentCalls: counters.parent.modelCalls, toolRuns: counters.parent.toolRuns, childCalls: counters.children.modelCalls }
  const answer = await runOnce()
  const got = {
    parentCalls: counters.parent.modelCalls - before.parentCalls,
    toolRuns: counters.parent.toolRuns - before.toolRuns,
    childCalls: counters.children.modelCalls - before.childCalls
  }
  if (answer !== expected.answer || got.parentCalls !== expected.parentCalls || got.toolRuns !== expected.toolRuns || got.childCalls !== expected.childCalls) {
    throw new Error(`${what} did not run: answered ${JSON.stringify(answer.slice(0, 40))}, got ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}`)
  }
}

export const runComposition = async (options: { readonly rounds: number; readonly roundMs: number }) => {
  const prepared = await Promise.all(libraries.map(async (library) => {
    const counters = { parent: { modelCalls: 0, toolRuns: 0 }, children: { modelCalls: 0, toolRuns: 0 } }
    const subjects = library.make({ counters: counters.parent }, { counters: counters.children })
    const parentRun = { answer: parentScenario.finalAnswer, parentCalls: childCalls + 1 }
    await check(`${library.name} child run`, subjects.direct, counters, { answer: childAnswer, parentCalls: 0, toolRuns: 0, childCalls: 1 })
    await check(`${library.name} parent + plain tool`, subjects.plainTool, counters, { ...parentRun, toolRuns: childCalls, childCalls: 0 })
    await check(`${library.name} parent + child as tool`, subjects.asTool, counters, { ...parentRun, toolRuns: 0, childCalls })
    const chain = { answer: childAnswer, parentCalls: 0, toolRuns: 0, childCalls: stageCount }
    await check(`${library.name} stages by hand`, subjects.byHand, counters, chain)
    if (subjects.pipeline !== undefined) await check(`${library.name} pipeline`, subjects.pipeline, counters, chain)
    return { library, subjects }
  }))
  const flat = prepared.flatMap(({ subjects }) => [subjects.direct, subjects.plainTool, subjects.asTool, subjects.byHand, ...(subjects.pipeline === undefined ? [] : [subjects.pipeline])])
  const timed = await interleavedRounds(flat, options)
  let next = 0
  const take = (): Timed => timed[next++]!
  return prepared.map(({ library, subjects }) => {
    const [direct, plainTool, asTool, byHand] = [take(), take(), take(), take()]
    const piped = subjects.pipeline === undefined ? undefined : take()
    // Derived figures from the medians, wall and CPU ("wall / CPU"): CPU is the steadier on a loaded machine.
    const both = (f: (pick: (t: Timed) => number) => number) =>
      `${Math.round(f((t) => t.wallUs.median))} / ${Math.round(f((t) => t.cpuUs.median))}`
    return {
      library: library.name,
      [`parent + ${childCalls} plain tools µs wall`]: show(plainTool.wallUs, 0),
      [`parent + ${childCalls} child-as-tool µs wall`]: show(asTool.wallUs, 0),
      "per child run as a tool µs (wall / CPU)": both((us) => (us(asTool) - us(plainTool)) / childCalls),
      "child run µs (wall / CPU)": both((us) => us(direct)),
      "per stage by hand µs (wall / CPU)": both((us) => us(byHand) / stageCount),
      "per stage of pipeline µs (wall / CPU)": piped === undefined ? "(no operator)" : both((us) => us(piped) / stageCount)
    }
  })
}
