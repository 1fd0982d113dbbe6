/**
 * Evaluating an agent in CI, with no network: the calculator's model and the judge answer from
 * cassettes (effect-agent-dsl/testing), the dataset is JSON Lines, the scorers check the answer, the
 * tools called, latency, tokens and a judge's verdict (effect-agent-dsl/evals); the report prints as a
 * table, is compared with a baseline, and sets the exit code.
 *
 * Run: npm run example:eval
 *   UPDATE_BASELINE=1 npm run example:eval      keep this run's report as the baseline
 *   EVAL_DIR=some/dir npm run example:eval      cassettes and baseline from another folder
 *   RECORD=1 AI_PROVIDER=openai AI_MODEL=gpt-4o-mini OPENAI_API_KEY=... npm run example:eval
 *                                               re-record both cassettes against a real model (keys
 *                                               are never written to them)
 * The committed cassettes were recorded with RECORD=stand-in: the same code path, with a scripted
 * stand-in in place of a provider (this repository's CI has no model to call).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Schema } from "effect"
import { agent, fromEnv, ModelClient, type ModelClient as Client, type ModelRequest, text, tool, toolCalls } from "effect-agent-dsl"
import { recordCassette, replayCassette } from "effect-agent-dsl/testing"
import {
  compareReports,
  datasetFromJsonl,
  evaluate,
  exactMatch,
  exitCodeOf,
  formatComparison,
  formatTable,
  latency,
  llmJudge,
  parseReport,
  reportJson,
  terminalProgress,
  tokenCost,
  toolTrajectory
} from "effect-agent-dsl/evals"

const here = (file: string) => fileURLToPath(new URL(`./evals/${file}`, import.meta.url))
// Where the cassettes and the baseline are (the test of this example points it at altered copies).
const dataDir = process.env.EVAL_DIR
const data = (file: string) => (dataDir === undefined ? here(file) : join(dataDir, file))

// 1. The agent under test, as in the application.
const Operands = Schema.Struct({ a: Schema.Finite, b: Schema.Finite })
const add = tool("add", { description: "Add two numbers", args: Operands, run: ({ a, b }) => a + b })
const multiply = tool("multiply", { description: "Multiply two numbers", args: Operands, run: ({ a, b }) => a * b })
const calculator = agent("calculator")
  .prompt("You are a calculator. Use the tools, then answer with the number only.")
  .tools({ add, multiply })
  .budget({ maxTurns: 4 })

// 2. The dataset: one case per line, with the answer and the tool calls expected.
const cases = `
{"id":"sum","input":"What is 3 + 5?","expected":"8","tools":[{"tool":"add","args":{"a":3,"b":5}}]}
{"id":"product","input":"What is 6 * 7?","expected":"42","tools":[{"tool":"multiply","args":{"a":6,"b":7}}]}
{"id":"two-steps","input":"What is (2 + 3) * 4?","expected":"20","tools":[{"tool":"add","args":{"a":2,"b":3}},{"tool":"multiply","args":{"a":5,"b":4}}]}
`

// 3. The models: replayed from cassettes, or recorded (RECORD=1: from the environment's provider).
const standIn = ModelClient.fromFunction((request: ModelRequest) => {
  const usage = { inputTokens: 120, outputTokens: 12 }
  const question = request.messages.find((m) => m.role === "user")?.content ?? ""
  const results = request.messages.filter((m) => m.role === "tool").map((m) => Number(m.content))
  if (question.includes("(2 + 3) * 4")) {
    if (results.length === 0) return { ...toolCalls([{ name: "add", arguments: { a: 2, b: 3 } }]), usage }
    if (results.length === 1) return { ...toolCalls([{ name: "multiply", arguments: { a: results[0], b: 4 } }]), usage }
  }
  const [, a, op, b] = /(\d+) ([+*]) (\d+)/.exec(question) ?? []
  if (results.length === 0) return { ...toolCalls([{ name: op === "*" ? "multiply" : "add", arguments: { a: Number(a), b: Number(b) } }]), usage }
  return { ...text(String(results.at(-1))), usage }
}, { provider: "stand-in", model: "arithmetic" })
const standInJudge = ModelClient.fromFunction(
  (request: ModelRequest) => {
    const { output, expected } = JSON.parse(request.messages.at(-1)!.content) as { output: string; expected: string }
    const right = output.trim() === expected
    return text(JSON.stringify({ score: right ? 1 : 0, reason: right ? "the right number, nothing else" : `expected ${expected}` }))
  },
  { provider: "stand-in", model: "judge" }
)
const model = (cassette: string, standInModel: Client): Client => {
  const mode = process.env.RECORD
  if (mode === "1") return recordCassette(fromEnv().client, { cassette })
  if (mode === "stand-in") return recordCassette(standInModel, { cassette })
  return replayCassette(cassette, { match: "ignore-volatile" })
}

// 4. Evaluate, print, compare with the baseline.
const program = Effect.gen(function*() {
  const dataset = yield* datasetFromJsonl(cases, { name: "calculator", input: Schema.String, expected: Schema.String })
  const judge = llmJudge({ model: model(data("judge.cassette.json"), standInJudge), rubric: "The answer is the correct number and nothing else." })
  const report = yield* evaluate(
    calculator.model(model(data("calculator.cassette.json"), standIn)),
    dataset,
    [exactMatch(), toolTrajectory({ order: "exact" }), latency({ maxMs: 10_000 }), tokenCost({ maxTokens: 2_000 }), judge],
    { concurrency: 2, budget: { maxTokens: 50_000 }, onProgress: terminalProgress() }
  )
  console.log(formatTable(report))
  const reportFile = join(tmpdir(), "calculator-eval.json")
  writeFileSync(reportFile, reportJson(report))
  console.log(`\nreport: ${reportFile}`)

  const baselineFile = data("baseline.json")
  if (process.env.UPDATE_BASELINE === "1" || !existsSync(baselineFile)) {
    writeFileSync(baselineFile, reportJson(report))
    console.log(`baseline written: ${baselineFile}`)
    return
  }
  const comparison = compareReports(parseReport(readFileSync(baselineFile, "utf8")), report)
  console.log(formatComparison(comparison))
  process.exitCode = exitCodeOf(comparison)
})

Effect.runPromise(program).catch((error: unknown) => {
  console.error(error)
  process.exitCode = 2
})
