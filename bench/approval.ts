/**
 * Approval overhead: the calculator where `multiply` needs approval, in every library. One approved run
 * is: run until it stops before `multiply` → its state serialised as a string (the snapshot) → that
 * string read back → approve → resume → the answer `17`. Beside each, the same library's calculator run
 * without approval, measured in the same interleaved rounds; and the snapshot's size in bytes.
 *
 * - ours: `tool(..., { needsApproval: true })`, `run` → `Suspended`, `encodeSnapshot`, `resume(json, decisions)`.
 * - `@openai/agents`: `tool({ needsApproval: true })`, `result.interruptions`, `result.state.toString()`,
 *   `RunState.fromString(agent, text)`, `state.approve(item)`, `run(agent, state)`.
 * - `ai` 6: `tool({ needsApproval: true })`; `generateText` returns `tool-approval-request` parts; the
 *   snapshot is `JSON.stringify` of the messages; a `tool-approval-response` in a tool message, then
 *   `generateText` again with those messages (as its docs show).
 * - `@mastra/core`: `createTool({ requireApproval: true })`; `generate` ends with `finishReason: "suspended"`.
 *   Its approval resumes only from workflow snapshots in the storage of a `Mastra` the agent is registered
 *   on (a standalone agent never writes them), so the agent gets a `Mastra` with the `InMemoryStore` it
 *   ships. Its snapshot string is the run id and the two rows the resume reads (`agentic-loop` and the
 *   nested `executionWorkflow`), read out of the store; reading it back writes them into the store, then
 *   `approveToolCallGenerate({ runId, toolCallId })`. A storage round trip the others do not make. Its
 *   run without approval is the calculator section's (a standalone agent), as every library's is.
 * Every approved run is checked like a calculator run: the answer, 4 model calls, 3 tool runs.
 */
import { type ModelMessage, stepCountIs, type ToolApprovalResponse, generateText } from "ai"
import { RunState, run } from "@openai/agents"
import { Mastra } from "@mastra/core/mastra"
import { InMemoryStore } from "@mastra/core/storage"
import type { WorkflowRunState } from "@mastra/core/workflows"
import { Effect, Schema } from "effect"
import { calculatorAgent as mastraCalculatorAgent, makeRunner as mastraRunner } from "./calculator/mastra.ts"
import { calculatorAgent, makeRunner as agentsRunner } from "./calculator/openai-agents.ts"
import { calculator, checkRun, type Counters, type Harness, maxTurns, mockModel, question, runTool, systemPrompt } from "./calculator/script.ts"
import { calculatorTools, makeRunnerZodSchema as aiRunner, plainModel } from "./calculator/vercel-ai.ts"
import { interleavedRounds, show, type Timed } from "./measure.ts"
import { ours } from "./ours-lib.ts"

const { agent, Decision, ModelClient, tool, encodeSnapshot } = ours
const Operands = Schema.Struct({ a: Schema.Finite, b: Schema.Finite })

/** A suspended run: its snapshot as a string, and what the resume must approve. */
interface Suspension {
  readonly text: string
  readonly approve: ReadonlyArray<string>
}

/** One approved run (`suspend`, then `resume` of its snapshot), and the size of the last snapshot it wrote. */
interface ApprovalRun {
  readonly runOnce: () => Promise<string>
  readonly snapshotBytes: () => number
  /** Runs until the run stops before `multiply`; its state serialised. */
  readonly suspend: () => Promise<Suspension>
  /** Reads the snapshot back, approves, continues to the answer. */
  readonly resume: (suspension: Suspension) => Promise<string>
}

const approvalRun = (suspend: () => Promise<Suspension>, resume: (suspension: Suspension) => Promise<string>): ApprovalRun => {
  let bytes = 0
  return {
    snapshotBytes: () => bytes,
    suspend,
    resume,
    runOnce: async () => {
      const suspension = await suspend()
      bytes = Buffer.byteLength(suspension.text)
      return resume(suspension)
    }
  }
}

const oursTools = ({ counters }: Harness) => ({
  add: tool("add", { description: "Add two numbers", args: Operands, run: runTool(calculator, counters, "add") }),
  multiply: tool("multiply", { description: "Multiply two numbers", args: Operands, run: runTool(calculator, counters, "multiply") }),
  gatedMultiply: tool("multiply", { description: "Multiply two numbers", args: Operands, needsApproval: true, run: runTool(calculator, counters, "multiply") })
})

const oursAgent = ({ counters }: Harness) =>
  agent("calculator").prompt(systemPrompt).model(ModelClient.fromFunction(mockModel(calculator, { counters }))).budget({ maxTurns: maxTurns(calculator) })

const oursPlain = (harness: Harness) => {
  const { add, multiply } = oursTools(harness)
  const plain = oursAgent(harness).tools({ add, multiply })
  return () => plain.run(question)
}

const oursApproval = (harness: Harness): ApprovalRun => {
  const { add, gatedMultiply } = oursTools(harness)
  const teller = oursAgent(harness).tools({ add, multiply: gatedMultiply })
  return approvalRun(
    async () => {
      const first = await teller.run(question)
      if (first._tag !== "Suspended") throw new Error("ours: the approval run must suspend")
      return { text: encodeSnapshot(first.snapshot), approve: first.pending.map((p) => p.id) }
    },
    async ({ text, approve }) => {
      const rest = await Effect.runPromise(teller.resume(text, Object.fromEntries(approve.map((id) => [id, Decision.approve]))))
      return rest._tag === "Completed" ? rest.output : rest._tag
    }
  )
}

const agentsApproval = (harness: Harness): ApprovalRun => {
  const teller = calculatorAgent(calculator, harness, { approve: "multiply" })
  return approvalRun(
    async () => {
      const first = await run(teller, question, { maxTurns: maxTurns(calculator) })
      if (first.interruptions.length === 0) throw new Error("@openai/agents: the approval run must be interrupted")
      return { text: first.state.toString(), approve: [] }
    },
    async ({ text }) => {
      const state = await RunState.fromString(teller, text)
      for (const interruption of state.getInterruptions()) state.approve(interruption)
      const rest = await run(teller, state, { maxTurns: maxTurns(calculator) })
      return String(rest.finalOutput)
    }
  )
}

const aiApproval = (harness: Harness): ApprovalRun => {
  const tools = calculatorTools(calculator, harness.counters, { wrap: true, approve: "multiply" })
  const model = plainModel(calculator, harness)
  const stopWhen = stepCountIs(maxTurns(calculator))
  return approvalRun(
    async () => {
      const messages: Array<ModelMessage> = [{ role: "user", content: question }]
      const first = await generateText({ model, system: systemPrompt, messages, tools, stopWhen })
      messages.push(...first.response.messages)
      const requests = first.content.filter((part) => part.type === "tool-approval-request")
      if (requests.length === 0) throw new Error("ai: the approval run must return a tool-approval-request")
      return { text: JSON.stringify(messages), approve: requests.map((r) => r.approvalId) }
    },
    async ({ text, approve }) => {
      const restored = JSON.parse(text) as Array<ModelMessage>
      const approvals: Array<ToolApprovalResponse> = approve.map((approvalId) => ({ type: "tool-approval-response", approvalId, approved: true }))
      restored.push({ role: "tool", content: approvals })
      const rest = await generateText({ model, system: systemPrompt, messages: restored, tools, stopWhen })
      return rest.text
    }
  )
}

/** The rows of a suspended Mastra agent run that its resume reads: the loop's and its nested step workflow's. */
const mastraSnapshotWorkflows = ["agentic-loop", "executionWorkflow"] as const
interface MastraSnapshot {
  readonly runId: string
  readonly rows: ReadonlyArray<{ readonly workflowName: string; readonly snapshot: WorkflowRunState | null }>
}

/**
 * The calculator agent registered on a `Mastra` with an `InMemoryStore` of its own. Each approval run makes
 * two: the first resume (the one each section checks before timing) reads the string into the second,
 * whose store is empty, so that the string is shown to be all that crosses; the others resume in the first.
 */
const mastraApproval = (harness: Harness): ApprovalRun => {
  const model = plainModel(calculator, harness)
  const maxSteps = maxTurns(calculator)
  const registered = () => {
    const storage = new InMemoryStore()
    const mastra = new Mastra({ agents: { calculator: mastraCalculatorAgent(calculator, harness, { approve: "multiply", model }) }, storage })
    const workflows = storage.getStore("workflows").then((store) => {
      if (store === undefined) throw new Error("@mastra/core: the InMemoryStore has no workflows store")
      return store
    })
    return { teller: mastra.getAgent("calculator"), workflows }
  }
  const main = registered()
  let firstResume: ReturnType<typeof registered> | undefined = registered()
  return approvalRun(
    async () => {
      const first = await main.teller.generate(question, { maxSteps })
      const toolCallId = (first.suspendPayload as { readonly toolCallId?: string } | undefined)?.toolCallId
      if (first.finishReason !== "suspended" || first.runId === undefined || toolCallId === undefined) {
        throw new Error("@mastra/core: the approval run must suspend")
      }
      const store = await main.workflows
      const runId = first.runId
      const rows = await Promise.all(mastraSnapshotWorkflows.map(async (workflowName) => ({ workflowName, snapshot: await store.loadWorkflowSnapshot({ workflowName, runId }) })))
      const snapshot: MastraSnapshot = { runId, rows }
      return { text: JSON.stringify(snapshot), approve: [toolCallId] }
    },
    async ({ text, approve }) => {
      const { teller, workflows } = firstResume ?? main
      firstResume = undefined
      const { runId, rows } = JSON.parse(text) as MastraSnapshot
      const store = await workflows
      for (const { workflowName, snapshot } of rows) if (snapshot !== null) await store.persistWorkflowSnapshot({ workflowName, runId, snapshot })
      let answer = ""
      for (const toolCallId of approve) answer = (await teller.approveToolCallGenerate({ runId, toolCallId, maxSteps })).text
      return answer
    }
  )
}

interface Library {
  readonly name: string
  readonly plain: (harness: Harness) => () => Promise<string>
  readonly approval: (harness: Harness) => ApprovalRun
}

const libraries: ReadonlyArray<Library> = [
  { name: "effect-agent-dsl (ours)", plain: oursPlain, approval: oursApproval },
  { name: "ai 6 (zodSchema())", plain: (harness) => aiRunner(calculator, harness), approval: aiApproval },
  { name: "@openai/agents 0.14", plain: (harness) => agentsRunner(calculator, harness), approval: agentsApproval },
  {
    name: "@mastra/core 1.71 (InMemoryStore; rows out and back in)",
    plain: (harness) => mastraRunner(calculator, harness),
    approval: mastraApproval
  }
]

const counters = (): Counters => ({ modelCalls: 0, toolRuns: 0 })

export const runApproval = async (options: { readonly rounds: number; readonly roundMs: number }) => {
  const subjects = libraries.map((library) => {
    const plainCounters = counters()
    const approvalCounters = counters()
    return {
      library,
      plainCounters,
      approvalCounters,
      plain: library.plain({ counters: plainCounters }),
      approval: library.approval({ counters: approvalCounters })
    }
  })
  for (const s of subjects) {
    checkRun(`${s.library.name} without approval`, calculator, await s.plain(), s.plainCounters)
    checkRun(`${s.library.name} with approval`, calculator, await s.approval.runOnce(), s.approvalCounters)
  }
  const timed = await interleavedRounds(subjects.flatMap((s) => [s.plain, s.approval.runOnce]), options)
  return subjects.map((s, index) => {
    const plain = timed[2 * index]!
    const approved = timed[2 * index + 1]!
    const added = (pick: (t: Timed) => number) => Math.round(pick(approved) - pick(plain))
    const ratio = (pick: (t: Timed) => number) => (pick(approved) / pick(plain)).toFixed(2)
    const wall = (t: Timed) => t.wallUs.median
    const cpu = (t: Timed) => t.cpuUs.median
    return {
      library: s.library.name,
      "approved run µs wall": show(approved.wallUs, 0),
      "approved run µs CPU": show(approved.cpuUs, 0),
      "plain run µs wall": show(plain.wallUs, 0),
      "plain run µs CPU": show(plain.cpuUs, 0),
      "added µs (wall / CPU)": `${added(wall)} / ${added(cpu)}`,
      "÷ plain (wall / CPU)": `${ratio(wall)} / ${ratio(cpu)}`,
      "snapshot bytes": s.approval.snapshotBytes()
    }
  })
}

/**
 * The resume path: a run continued from its snapshot (the string read back, the decision checked, the
 * run continued: `multiply`, a model call, `add`, the answer; 2 model calls and 2 tool runs) against a
 * fresh run of the whole calculator (4 model calls, 3 tool runs: more work than the resume does) and the
 * run up to the suspension, in the same interleaved rounds. (The same work fresh as a difference, whole
 * run minus run to the suspension, went negative on a loaded machine: not a figure.) The snapshot is
 * taken once, before timing, and every resume reads the same string.
 */
export const runResume = async (options: { readonly rounds: number; readonly roundMs: number }) => {
  const subjects = await Promise.all(libraries.map(async (library) => {
    const plainCounters = counters()
    const suspendCounters = counters()
    const resumeCounters = counters()
    const plain = library.plain({ counters: plainCounters })
    const suspending = library.approval({ counters: suspendCounters })
    const resuming = library.approval({ counters: resumeCounters })
    const suspension = await resuming.suspend()
    const resumeBefore = { ...resumeCounters }
    const answer = await resuming.resume(suspension)
    const resumed = { modelCalls: resumeCounters.modelCalls - resumeBefore.modelCalls, toolRuns: resumeCounters.toolRuns - resumeBefore.toolRuns }
    if (answer !== calculator.finalAnswer || resumed.modelCalls !== 2 || resumed.toolRuns !== 2) {
      throw new Error(`${library.name}: a resume must answer 17 with 2 model calls and 2 tool runs; answered ${answer} with ${JSON.stringify(resumed)}`)
    }
    return { library, plain, suspend: () => suspending.suspend(), resume: () => resuming.resume(suspension), bytes: Buffer.byteLength(suspension.text) }
  }))
  const timed = await interleavedRounds(subjects.flatMap((s) => [s.plain, s.suspend, s.resume]), options)
  return subjects.map((s, index) => {
    const [plain, suspend, resume] = [timed[3 * index]!, timed[3 * index + 1]!, timed[3 * index + 2]!]
    const wall = (t: Timed) => t.wallUs.median
    const cpu = (t: Timed) => t.cpuUs.median
    return {
      library: s.library.name,
      "resume → 17, µs wall": show(resume.wallUs, 0),
      "resume → 17, µs CPU": show(resume.cpuUs, 0),
      "fresh whole run, µs wall": show(plain.wallUs, 0),
      "fresh whole run, µs CPU": show(plain.cpuUs, 0),
      "resume ÷ fresh whole run (wall / CPU)": `${(wall(resume) / wall(plain)).toFixed(2)} / ${(cpu(resume) / cpu(plain)).toFixed(2)}`,
      "run to suspension, µs wall / CPU": `${Math.round(wall(suspend))} / ${Math.round(cpu(suspend))}`,
      "snapshot bytes": s.bytes
    }
  })
}
