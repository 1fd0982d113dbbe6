/**
 * What a well-formed AG-UI stream is, checked here independently of the mapper: it opens with
 * `RUN_STARTED` and ends with exactly one `RUN_FINISHED` or `RUN_ERROR`, nothing after it; every
 * text message, reasoning message and span, tool call and step that starts ends before that, under the
 * id or name it started with, and no id is started twice; content, arguments and ends name something
 * open; each tool result answers a call this stream made, once; the finish names the run it started,
 * its pending calls and interrupts name calls of this stream left without a result, and a successful
 * finish without a pending list leaves no call without one (a consumer would take it for the client's).
 * Returns the problems found (empty when the stream is well-formed).
 */
type Event = { readonly type: string; readonly [key: string]: unknown }

export const wellFormedProblems = (events: ReadonlyArray<Event>): Array<string> => {
  const problems: Array<string> = []
  const at = (i: number, what: string) => problems.push(`#${i} ${events[i]?.type}: ${what}`)
  if (events[0]?.type !== "RUN_STARTED") problems.push(`the first event is ${events[0]?.type}, not RUN_STARTED`)
  const terminal = events.findIndex((e) => e.type === "RUN_FINISHED" || e.type === "RUN_ERROR")
  if (terminal !== events.length - 1) problems.push(`the terminal event is at ${terminal} of ${events.length}`)
  const open = { text: new Set<unknown>(), reasoning: new Set<unknown>(), span: new Set<unknown>(), call: new Set<unknown>(), step: new Set<unknown>() }
  const used = { text: new Set<unknown>(), reasoning: new Set<unknown>(), span: new Set<unknown>(), call: new Set<unknown>() }
  const answered = new Set<unknown>()
  const starts: Record<string, [keyof typeof open, string]> = {
    TEXT_MESSAGE_START: ["text", "messageId"],
    REASONING_MESSAGE_START: ["reasoning", "messageId"],
    REASONING_START: ["span", "messageId"],
    TOOL_CALL_START: ["call", "toolCallId"],
    STEP_STARTED: ["step", "stepName"]
  }
  const inside: Record<string, [keyof typeof open, string, boolean]> = {
    TEXT_MESSAGE_CONTENT: ["text", "messageId", false],
    TEXT_MESSAGE_END: ["text", "messageId", true],
    REASONING_MESSAGE_CONTENT: ["reasoning", "messageId", false],
    REASONING_MESSAGE_END: ["reasoning", "messageId", true],
    REASONING_END: ["span", "messageId", true],
    TOOL_CALL_ARGS: ["call", "toolCallId", false],
    TOOL_CALL_END: ["call", "toolCallId", true],
    STEP_FINISHED: ["step", "stepName", true]
  }
  events.forEach((event, i) => {
    const start = starts[event.type]
    if (start !== undefined) {
      const [kind, key] = start
      const id = event[key]
      if (typeof id !== "string" || id === "") at(i, `no ${key}`)
      if (open[kind].has(id)) at(i, `${String(id)} is already open`)
      if (kind !== "step") {
        const seen = used[kind as keyof typeof used]
        if (seen.has(id)) at(i, `${String(id)} was started before`)
        seen.add(id)
      }
      open[kind].add(id)
    }
    const within = inside[event.type]
    if (within !== undefined) {
      const [kind, key, closes] = within
      if (!open[kind].has(event[key])) at(i, `${String(event[key])} is not open`)
      if (closes) open[kind].delete(event[key])
    }
    if (event.type === "TOOL_CALL_RESULT") {
      if (!used.call.has(event.toolCallId) || open.call.has(event.toolCallId)) at(i, `answers ${String(event.toolCallId)}, not a call this stream made and ended`)
      if (answered.has(event.toolCallId)) at(i, `answers ${String(event.toolCallId)} twice`)
      answered.add(event.toolCallId)
    }
    if (event.type === "RUN_FINISHED" || event.type === "RUN_ERROR") {
      for (const [kind, ids] of Object.entries(open)) if (ids.size > 0) at(i, `${kind} still open: ${[...ids].join(", ")}`)
    }
    if (event.type === "RUN_FINISHED") {
      const first = events[0]
      if (event.threadId !== first?.threadId || event.runId !== first?.runId) at(i, "names another run than RUN_STARTED")
      const outcome = event.outcome as { readonly type: string; readonly pendingToolCallIds?: ReadonlyArray<unknown>; readonly interrupts?: ReadonlyArray<{ readonly toolCallId?: unknown }> }
      const named = outcome.type === "interrupt" ? (outcome.interrupts ?? []).map((x) => x.toolCallId) : outcome.pendingToolCallIds ?? []
      for (const id of named) if (!used.call.has(id) || answered.has(id)) at(i, `names ${String(id)}, not a call of this stream waiting for an answer`)
      // Without a list, a consumer takes the calls without a result as the client's to run: there must be none.
      const unanswered = [...used.call].filter((id) => !answered.has(id))
      if (outcome.type === "success" && named.length === 0 && unanswered.length > 0) at(i, `leaves ${unanswered.join(", ")} without a result`)
    }
  })
  return problems
}
