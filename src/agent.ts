/**
 * The package's `agent`: the builder of `dsl/` bound to the loop of `runtime/`. This is the one place
 * where describing and running meet, so neither folder imports the other.
 */
import { agentFactory, type AgentFactory } from "./dsl/agent.ts"
import { runAgent } from "./runtime/run-agent.ts"

/**
 * Starts an agent. With an `output` Schema the final answer is decoded into it (the model is told the
 * JSON Schema and corrected within the budget); with an `input` Schema, `run` takes that type.
 *
 * @example
 * ```ts
 * const calculator = agent("calculator")
 *   .prompt("You are a calculator. Use the tools.")
 *   .model(client)
 *   .tools({ add, multiply })
 *   .skills(({ add, multiply }) => [skill("compute", "Perform calculations").tools(add, multiply)])
 * await calculator.run("What is (3 + 5) * 2?")
 * ```
 */
export const agent: AgentFactory = agentFactory(runAgent)
