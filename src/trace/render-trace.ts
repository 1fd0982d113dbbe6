/**
 * Renders a JSON Lines trace as an indented timeline, one block per run, with offsets from the run's
 * start. Lines that are not trace lines are skipped and counted.
 */
import type { TraceLine } from "./trace-line.ts"

const short = (value: unknown, max = 80): string => {
  const text = typeof value === "string" ? JSON.stringify(value) : JSON.stringify(value) ?? "undefined"
  return text.length > max ? `${text.slice(0, max - 1)}…` : text
}

const describe = (line: TraceLine): { readonly depth: number; readonly text: string } => {
  const f = line as Record<string, any>
  switch (line.event) {
    case "RunStart":
      return { depth: 0, text: `run ${line.run}  agent ${line.agent}  input ${short(f.input)}` }
    case "SkillChosen":
      return { depth: 1, text: `skill ${f.skill} (${f.how})` }
    case "Turn":
      return { depth: 1, text: `turn ${f.turn}${f.skill === "(routing)" ? " (routing)" : ""}` }
    case "ModelCall":
      return { depth: 2, text: `model ← ${f.messages} messages, tools [${(f.tools as Array<string>).join(", ")}]${f.toolChoice === undefined ? "" : `, choice ${short(f.toolChoice)}`}` }
    case "ModelResponse": {
      const usage = f.usage === undefined ? "" : `, tokens ${f.usage.inputTokens}/${f.usage.outputTokens}`
      const body = f.response === "Text" ? `text ${short(f.text)}` : `calls ${(f.calls as Array<string>).join(", ")}`
      return { depth: 2, text: `model → ${body}  (${f.durationMs} ms${usage})` }
    }
    case "Retrying":
      return { depth: 2, text: `model retry ${f.attempt}/${f.maxAttempts} in ${Math.round(f.waitMs)} ms: ${short(f.reason)}` }
    case "ToolUse":
      return { depth: 2, text: `tool ${f.tool}(${short(f.args, 60)}) = ${short(f.result, 60)}  (${f.durationMs} ms${f.validated ? "" : ", not validated"})` }
    case "ToolProgress":
      return { depth: 3, text: `tool ${f.tool} progress ${short(f.data, 60)}` }
    case "ToolError":
      return { depth: 2, text: `tool ${f.tool} failed: ${f.error?.message}  → ${f.recovery}` }
    case "InvalidArgs":
      return { depth: 2, text: `tool ${f.tool} invalid args ${short(f.raw, 60)}: ${String(f.issues).split("\n").map((l) => l.trim()).join(" ")}  → ${f.recovery}` }
    case "ToolHallucinated":
      return { depth: 2, text: `tool ${f.tool} is not allowed (allowed: ${(f.allowed as Array<string>).join(", ") || "none"})  → ${f.policy}` }
    case "ArgsRepaired":
      return { depth: 2, text: `tool ${f.tool} args repaired: ${(f.corrections as Array<any>).map((c) => `${short(c.from)} → ${short(c.to)}`).join(", ")}` }
    case "Handoff":
      return { depth: 2, text: `handoff to ${f.to}` }
    case "ApprovalRequested":
      return { depth: 2, text: `approval requested for ${(f.calls as Array<any>).map((c) => `${c.tool} ${c.id}`).join(", ")}` }
    case "ApprovalDecided":
      return { depth: 2, text: `approval ${f.decision} for ${f.tool} ${f.callId}${f.reason === undefined ? "" : `: ${f.reason}`}` }
    case "KnowledgeUsed":
      return { depth: 2, text: `knowledge ${f.knowledge} (${f.characters} chars${f.cached ? ", cached" : ""})` }
    case "BudgetThreshold":
      return { depth: 1, text: `budget ${f.reason} at ${f.usedPercent}% (${f.used}/${f.limit}, threshold ${f.threshold})` }
    case "BudgetExceeded":
      return { depth: 1, text: `budget exceeded: ${f.reason} ${f.used}/${f.limit}` }
    case "RunEnd": {
      const what = f.outcome === "Success" ? `success ${short(f.output)}` : f.outcome === "Failure" ? `failure ${f.error?.tag ?? ""}: ${f.error?.message}` : f.outcome === "Suspended" ? `suspended, waiting for ${(f.pending as Array<string> | undefined)?.join(", ")}` : "interrupted"
      return { depth: 1, text: `end ${what}  (${f.turns} turns, ${f.toolCalls} tool calls, ${f.durationMs} ms)` }
    }
    case "HookFailed":
      return { depth: 2, text: `hook ${f.hook} failed: ${f.error?.message}` }
  }
}

/** A line missing the fields its event should have (a truncated or hand-written trace) is shown as incomplete. */
const describeSafely = (line: TraceLine): { readonly depth: number; readonly text: string } | undefined => {
  try {
    return describe(line) as { depth: number; text: string } | undefined
  } catch {
    return { depth: 2, text: `${line.event} (incomplete line)` }
  }
}

const isTraceLine = (u: unknown): u is TraceLine =>
  typeof u === "object" && u !== null && (u as { v?: unknown }).v === 1 && typeof (u as { run?: unknown }).run === "string" &&
  typeof (u as { event?: unknown }).event === "string" && typeof (u as { ts?: unknown }).ts === "number"

/**
 * The timeline of a JSON Lines trace.
 *
 * @example
 * ```ts
 * console.log(renderTrace(readFileSync("trace.jsonl", "utf8")))
 * ```
 */
export const renderTrace = (jsonl: string): string => {
  const runs = new Map<string, Array<TraceLine>>()
  let skipped = 0
  for (const raw of jsonl.split("\n")) {
    if (raw.trim() === "") continue
    let parsed: unknown
    try {
      parsed = JSON.parse(raw)
    } catch {
      skipped++
      continue
    }
    if (!isTraceLine(parsed)) {
      skipped++
      continue
    }
    const lines = runs.get(parsed.run)
    if (lines === undefined) runs.set(parsed.run, [parsed])
    else lines.push(parsed)
  }
  const out: Array<string> = []
  for (const lines of runs.values()) {
    const start = lines[0]!.ts
    for (const line of lines) {
      const known = describeSafely(line)
      const { depth, text } = known ?? { depth: 2, text: `${line.event}` }
      out.push(`${`+${line.ts - start}ms`.padStart(9)}  ${"  ".repeat(depth)}${text}`)
    }
    out.push("")
  }
  if (skipped > 0) out.push(`(${skipped} line${skipped === 1 ? "" : "s"} skipped: not trace lines)`)
  return out.join("\n")
}
