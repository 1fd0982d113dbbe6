/** The agent the approval suites share (and the child process resumes): a bank with one guarded transfer. */
import { Schema } from "effect"
import { agent, type ModelClient, tool, unsafeNoSchema } from "../../src/index.ts"

export const secret = "a-test-secret-of-enough-length"

export const makeBank = (model: ModelClient, options: { readonly sign?: string } = {}) => {
  const executed: Array<{ readonly tool: string; readonly args: unknown }> = []
  const balance = tool("balance", {
    args: Schema.Struct({}),
    run: () => {
      executed.push({ tool: "balance", args: {} })
      return 1000
    }
  })
  const transfer = tool("transfer", {
    description: "Transfer money",
    args: Schema.Struct({ to: Schema.String, amount: Schema.Finite }),
    needsApproval: ({ amount }) => amount > 100,
    run: (args) => {
      executed.push({ tool: "transfer", args })
      return `sent ${args.amount} to ${args.to}`
    }
  })
  const wipe = tool("wipe", {
    args: unsafeNoSchema({ mode: "human-approval" }),
    run: (args) => {
      executed.push({ tool: "wipe", args })
      return "wiped"
    }
  })
  const base = agent("bank").model(model).tools({ balance, transfer, wipe })
  return { bank: options.sign === undefined ? base : base.signSnapshots(options.sign), executed, tools: { balance, transfer, wipe } }
}
