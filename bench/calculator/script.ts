/**
 * The shared scenario: three tool-call turns, then a final answer. (3 + 5) = 8, 8 * 2 = 16, 16 + 1 = 17.
 * Each mock model picks its reply from how many tool results the prompt already holds, so a single
 * stateless model serves any number of concurrent runs, identically for every library.
 */
export const steps = [
  { tool: "add", args: { a: 3, b: 5 } },
  { tool: "multiply", args: { a: 8, b: 2 } },
  { tool: "add", args: { a: 16, b: 1 } }
] as const

export const finalAnswer = "17"

/** Model calls (agent steps) per run. */
export const stepsPerRun = steps.length + 1

export const question = "What is ((3 + 5) * 2) + 1?"

/** Resolves on the next macrotask: used for the memory run, so that all runs are in flight at once. */
export const nextTick = () => new Promise<void>((resolve) => setImmediate(resolve))

/** Counted by every implementation, so the harness can check that each run really ran the loop. */
export interface Counters {
  modelCalls: number
  toolRuns: number
}

/** A runner: one complete agent run; `concurrentMode` makes every model call wait a macrotask. */
export type MakeRunner = (options: { readonly concurrentMode: boolean; readonly counters: Counters }) => () => Promise<string>
