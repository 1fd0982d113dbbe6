/**
 * The shared scenarios. The calculator: three tool-call turns, then a final answer
 * ((3 + 5) = 8, 8 * 2 = 16, 16 + 1 = 17). The scaling scenarios: `turns` calls of `add`, optionally with
 * a large tool result, then a final answer.
 *
 * Each mock model picks its reply from how many tool results the prompt already holds, so a single
 * stateless model serves any number of concurrent runs, identically for every library. Every mock is
 * async (returns a Promise, as a real model call does), reports usage, and every tool is async.
 */
export interface Step {
  /** The tool called: `add` or `multiply` in the calculator, `ask` in the composition bench. */
  readonly tool: string
  readonly args: Readonly<Record<string, unknown>>
}

export interface Scenario {
  readonly name: string
  /** Tool-call turns before the final answer. */
  readonly turns: number
  /** The model's tool call after `toolResults` results, or undefined for the final answer. */
  readonly step: (toolResults: number) => Step | undefined
  readonly finalAnswer: string
  /** When set, every tool returns a string of this many characters instead of the number. */
  readonly resultBytes?: number
}

const calculatorSteps: ReadonlyArray<Step> = [
  { tool: "add", args: { a: 3, b: 5 } },
  { tool: "multiply", args: { a: 8, b: 2 } },
  { tool: "add", args: { a: 16, b: 1 } }
]

export const calculator: Scenario = {
  name: "calculator",
  turns: calculatorSteps.length,
  step: (i) => calculatorSteps[i],
  finalAnswer: "17"
}

/** `turns` calls of `add(i, 1)`, then "done"; tool results of `resultBytes` characters when given. */
export const scaling = (turns: number, resultBytes?: number): Scenario => ({
  name: resultBytes === undefined ? `${turns} turns` : `${turns} turns × ${resultBytes / 1000} KB results`,
  turns,
  step: (i) => (i < turns ? { tool: "add", args: { a: i, b: 1 } } : undefined),
  finalAnswer: "done",
  ...(resultBytes === undefined ? {} : { resultBytes })
})

/** Model calls (agent steps) per run. */
export const stepsPerRun = (scenario: Scenario) => scenario.turns + 1

/** The turn budget every library gets: enough for the scenario, with room to spare. */
export const maxTurns = (scenario: Scenario) => scenario.turns + 2

export const question = "What is ((3 + 5) * 2) + 1?"
export const systemPrompt = "You are a calculator. Use the tools."

/** Usage every mock reports for every call. */
export const callUsage = { inputTokens: 10, outputTokens: 5 } as const

/** Counted by every implementation, so the harness can check that each run really ran the loop. */
export interface Counters {
  modelCalls: number
  toolRuns: number
}

/**
 * What a runner gets: its counters, and optionally `park`, awaited by the mock model at the start of
 * every model call (the memory barrier parks all runs in one model call).
 */
export interface Harness {
  readonly counters: Counters
  readonly park?: (toolResults: number) => Promise<void> | undefined
}

/** The tool body every library runs (async): the sum or product, or a large string result. */
export const runTool = (scenario: Scenario, counters: Counters, name: "add" | "multiply") => {
  const pad = scenario.resultBytes === undefined ? undefined : "x".repeat(scenario.resultBytes)
  return async ({ a, b }: { readonly a: number; readonly b: number }): Promise<number | string> => {
    counters.toolRuns++
    const value = name === "add" ? a + b : a * b
    return pad === undefined ? value : `${value}${pad}`.slice(0, pad.length)
  }
}

/** What the shared mock model answers: our `LlmResponse` shape (the floor reads the same). */
export type MockReply =
  | { readonly _tag: "Text"; readonly content: string; readonly usage: typeof callUsage }
  | {
    readonly _tag: "ToolCalls"
    readonly calls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly arguments: string }>
    readonly usage: typeof callUsage
  }

/**
 * The async mock model of ours and the floor (one body, so both do the same work): counts tool results
 * in the request, waits at `park`, answers the scenario's next step.
 */
export const mockModel = (scenario: Scenario, { counters, park }: Harness) => {
  let ids = 0
  return async (request: { readonly messages: ReadonlyArray<{ readonly role: string }> }): Promise<MockReply> => {
    let toolResults = 0
    for (const message of request.messages) if (message.role === "tool") toolResults++
    if (park !== undefined) await park(toolResults)
    counters.modelCalls++
    const step = scenario.step(toolResults)
    return step === undefined
      ? { _tag: "Text", content: scenario.finalAnswer, usage: callUsage }
      : { _tag: "ToolCalls", calls: [{ id: `call_${ids++}`, name: step.tool, arguments: JSON.stringify(step.args) }], usage: callUsage }
  }
}

/** A runner: one complete agent run of `scenario`, resolving to the final answer. */
export type MakeRunner = (scenario: Scenario, harness: Harness) => () => Promise<string>

/** Checks that a run of `scenario` returned the answer and made exactly the expected calls. */
export const checkRun = (library: string, scenario: Scenario, output: string, counters: Counters, runs = 1) => {
  const calls = runs * stepsPerRun(scenario)
  const tools = runs * scenario.turns
  if (output !== scenario.finalAnswer || counters.modelCalls !== calls || counters.toolRuns !== tools) {
    throw new Error(
      `${library} did not run ${scenario.name}: answered ${JSON.stringify(output.slice(0, 40))}, ` +
        `${counters.modelCalls}/${calls} model calls, ${counters.toolRuns}/${tools} tool runs`
    )
  }
}
