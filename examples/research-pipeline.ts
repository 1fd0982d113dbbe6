/**
 * A research pipeline composed from several agents, on scripted models (no network, no key):
 *
 *   planner ─→ parallel(historian, engineer) ─→ writer (+ fact-checker as a tool) ─→ loop(editor) ─→ branch(reviewer)
 *
 * The planner's typed plan reaches both researchers as the typed value; their notes reach the writer as
 * a typed tuple; the writer checks a claim with a fact-checker agent called as a tool (a child run,
 * charged to the pipeline's budget); the editor polishes the draft until it is marked final (at most 3 rounds); the reviewer
 * answers a tagged verdict that a branch routes. Run: npm run example:research
 */
import { Schema } from "effect"
import { agent, branch, loop, parallel, pipeline, text, toolCalls } from "effect-agent-dsl"
import { scriptedModel } from "effect-agent-dsl/testing"

const Plan = Schema.Struct({ question: Schema.String, angles: Schema.Array(Schema.String) })
const Notes = Schema.Tuple([Schema.String, Schema.String])
const Verdict = Schema.Union([
  Schema.TaggedStruct("Approved", { summary: Schema.String }),
  Schema.TaggedStruct("Rejected", { reason: Schema.String })
])

const planner = agent("planner", { output: Plan })
  .prompt("Split the question into research angles.")
  .model(scriptedModel(text('{"question":"Why did Effect 4 merge its packages?","angles":["history","engineering"]}')))

const historian = agent("historian", { input: Plan })
  .prompt("Research the history angle.")
  .model(scriptedModel(text("Effect 3 spread Schema, Platform and AI over many packages; versions drifted.")))

const engineer = agent("engineer", { input: Plan })
  .prompt("Research the engineering angle.")
  .model(scriptedModel(text("One package gives one version of the runtime, smaller bundles and shared internals.")))

const factChecker = agent("fact-checker")
  .prompt("Check one claim; answer true or false with a source.")
  .model(scriptedModel(text("true: the Effect 4 release notes say so")))

const writer = agent("writer", { input: Notes })
  .prompt("Write a short report from the notes. Check claims with fact_check.")
  .model(scriptedModel([
    toolCalls([{ id: "check-1", name: "fact_check", arguments: { input: "Effect 4 ships one package" } }]),
    text("Draft: Effect 4 merged its packages to end version drift and share one runtime.")
  ]))
  .tools({ fact_check: factChecker.asTool({ name: "fact_check", description: "Check a claim" }) })

const editor = agent("editor")
  .prompt("Tighten the draft. Mark it FINAL when it is good.")
  .model(scriptedModel([
    text("Effect 4 merged its packages to end version drift."),
    text("FINAL: Effect 4 merged its packages to end version drift and share one runtime.")
  ]))

const reviewer = agent("reviewer", { output: Verdict })
  .prompt("Approve or reject the report.")
  .model(scriptedModel(text('{"_tag":"Approved","summary":"clear and sourced"}')))

const research = pipeline(
  "research",
  planner,
  parallel("gather", [historian, engineer], { concurrency: 2 }),
  writer,
  loop("polish", editor, { until: (draft) => draft.startsWith("FINAL"), maxIterations: 3 })
)
  .andThen(reviewer)
  .budget({ maxDuration: 60_000, maxToolCalls: 10 })
  .onRunEnd((end) => console.log(`[${end.name}] ${end.outcome._tag} in ${end.durationMs} ms`))

const published = branch("publish", research, {
  Approved: (verdict) => `published (${verdict.summary})`,
  Rejected: (verdict) => `sent back: ${verdict.reason}`
})

console.log("(scripted models: no network, no key)")
console.log(await published.run("Why did Effect 4 merge its packages?"))
