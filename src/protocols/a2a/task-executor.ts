/**
 * An agent as an A2A `AgentExecutor`: each A2A task is one run of the agent. A task's `contextId` is a
 * session (src/runtime/session.ts), so the messages of earlier tasks in the same context are the
 * run's history. As the run goes, its tool calls are reported as `working` status updates; its end
 * is published through the one table `taskStateOf` (completed with an `output` artifact, failed with
 * the error's message, canceled, or input-required with the calls that wait for approval). The next
 * message on an input-required task carries the decisions and resumes the run (once: the session
 * takes its waiting run). `CancelTask` interrupts the run, its model request and its tools.
 *
 * Malformed parts and decisions are refused before anything runs, with the protocol's invalid-params
 * error (-32602), under any request handler: `execute` decides them synchronously, which is the only
 * way the SDK's `DefaultRequestHandler` answers an executor's refusal as the request's error (a
 * rejected `execute` fails the task instead). A task takes one message at a time: `execute` claims
 * the task before anything else, and refuses a message on a task it is running (or resuming) with the
 * unsupported-operation error (-32004), leaving the running task as it is. Given the handler's task
 * store, it takes a message it refuses back out of the task's history, where that handler put it.
 */
import { type Message, Role, type Task, TaskState } from "@a2a-js/sdk"
import { RequestMalformedError, UnsupportedOperationError } from "@a2a-js/sdk/errors"
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type ExecutionEventBusManager, type RequestContext, type TaskStore } from "@a2a-js/sdk/server"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import * as Semaphore from "effect/Semaphore"
import type { AnyRunnable } from "../../compose/runnable.ts"
import type { Decisions } from "../../dsl/decision.ts"
import { StreamSink } from "../../dsl/lineage.ts"
import type { AgentDefinition } from "../../dsl/agent-definition.ts"
import { withDefinitionServices } from "../../dsl/definition-services.ts"
import type { RunEndEvent, RunStreamEvent, WaitingCall } from "../../dsl/events.ts"
import { AgentConfigError, type AgentError, DecisionsInvalid } from "../../errors.ts"
import { checkResumeAgent, runOutcome } from "../../runtime/run-agent.ts"
import { makeSession, type SessionCore, type SessionOptions } from "../../runtime/session.ts"
import { decisionsFromParts, inputFromParts, outputParts, pendingParts, textPart } from "./parts.ts"
import { takeBackMessage } from "./take-back-message.ts"
import { taskStateOf } from "./task-state.ts"

/** One context: its session, where the events of the run in flight go, and the lock that makes it one run at a time. */
interface ContextEntry {
  readonly session: SessionCore
  readonly lock: Semaphore.Semaphore
  sink: ((event: RunStreamEvent) => void) | undefined
}

/** The run of a context that waits for decisions: its id (a task binds to it) and its waiting calls. */
export interface WaitingInContext {
  readonly runId: string
  readonly pending: ReadonlyArray<WaitingCall>
}

/** Where a run's events go while it runs. */
export type EventSink = (event: RunStreamEvent) => void

/**
 * What the executor runs: an agent over sessions (`agentDriver`), or any runnable such as a
 * composite (`runnableDriver`). Effects are complete: services provided, nothing required.
 */
export interface TaskDriver {
  readonly name: string
  /** The input Schema message parts are decoded with (text when undefined). */
  readonly input: Schema.Top | undefined
  /** A fresh run in `contextId` on `input`. */
  readonly send: (contextId: string, input: unknown, sink: EventSink) => Effect.Effect<unknown, AgentError>
  /** The calls a run of `contextId` waits on, if one does. */
  readonly waiting: (contextId: string) => Effect.Effect<WaitingInContext | undefined, AgentError>
  /**
   * Resumes the waiting run of `contextId` with `decisions`, only when it is still run `runId`
   * (`DecisionsInvalid` otherwise: the decisions were given for another run's calls).
   */
  readonly resume: (contextId: string, runId: string, decisions: Decisions, sink: EventSink) => Effect.Effect<unknown, AgentError>
  /**
   * Checks `decisions` for the waiting run `runId` of `contextId` and runs nothing (an edit its tool's
   * Schema refuses, a call that does not wait): the task keeps waiting when they are refused.
   */
  readonly checkResume?: (contextId: string, runId: string, decisions: Decisions) => Effect.Effect<void, AgentError>
}

/**
 * An agent as a task driver: each context is a session of the agent (its history, its waiting run).
 *
 * @example
 * ```ts
 * const executor = taskExecutor(agentDriver(definitionOf(helper)))
 * ```
 */
export const agentDriver = (definition: AgentDefinition, options: TaskExecutorOptions = {}): TaskDriver => {
  const contexts = new Map<string, ContextEntry>()
  const contextOf = (contextId: string): ContextEntry => {
    const found = contexts.get(contextId)
    if (found !== undefined) return found
    // The listener reads the entry's sink; the entry's lock makes the run in flight the only one.
    const entry: ContextEntry = { session: undefined as unknown as SessionCore, lock: Semaphore.makeUnsafe(1), sink: undefined }
    const observed: AgentDefinition = Object.freeze({
      ...definition,
      listeners: [...definition.listeners, { event: "*" as const, listener: (event: RunStreamEvent) => void entry.sink?.(event) }]
    })
    ;(entry as { session: SessionCore }).session = makeSession(observed, contextId, options.sessions?.(contextId) ?? {})
    contexts.set(contextId, entry)
    return entry
  }
  const observe = (contextId: string, sink: EventSink, run: (session: SessionCore) => Effect.Effect<unknown, AgentError, any>) => {
    const entry = contextOf(contextId)
    const observed = Effect.suspend(() => {
      entry.sink = sink
      return run(entry.session)
    }).pipe(Effect.ensuring(Effect.sync(() => void (entry.sink = undefined))))
    return entry.lock.withPermit(withDefinitionServices(definition, observed) as Effect.Effect<unknown, AgentError>)
  }
  return {
    name: definition.name,
    input: definition.input,
    send: (contextId, input, sink) => observe(contextId, sink, (session) => session.send(input)),
    waiting: (contextId) =>
      Effect.map(contextOf(contextId).session.waiting(), (run) => (run === undefined ? undefined : { runId: run.runId, pending: run.pending })),
    resume: (contextId, runId, decisions, sink) =>
      observe(contextId, sink, (session) =>
        // Checked under the context's lock: no other task of the context can make another run wait in between.
        Effect.flatMap(session.waiting(), (run) =>
          run?.runId === runId
            ? session.resume(decisions)
            : Effect.fail(new DecisionsInvalid({ agent: definition.name, toolCallId: "*", reason: `run ${runId} no longer waits: a later task of its context is waiting` })))),
    checkResume: (contextId, runId, decisions) =>
      Effect.flatMap(contextOf(contextId).session.waiting(), (run) =>
        run?.runId === runId
          ? checkResumeAgent(definition, run.snapshot, decisions)
          : Effect.fail(new DecisionsInvalid({ agent: definition.name, toolCallId: "*", reason: `run ${runId} no longer waits: a later task of its context is waiting` })))
  }
}

/**
 * Any runnable (a composite, or a function step) as a task driver: each task runs it once on the
 * message's input (text, or JSON decoded when the text parses). The events of the agent runs under it
 * (`StreamSink`) report its progress and usage. Contexts carry no history and nothing waits.
 *
 * @example
 * ```ts
 * const executor = taskExecutor(runnableDriver(pipeline("research", searcher, writer)))
 * ```
 */
export const runnableDriver = (runnable: AnyRunnable): TaskDriver => ({
  name: runnable.name,
  input: undefined,
  send: (_contextId, input, sink) =>
    Effect.suspend(() => runnable.runEffect(input) as Effect.Effect<unknown, AgentError>).pipe(
      Effect.provideService(StreamSink, (event: RunStreamEvent) => Effect.sync(() => sink(event)))
    ),
  waiting: () => Effect.succeed(undefined),
  resume: () => Effect.fail(new AgentConfigError({ subject: `runnable "${runnable.name}"`, reason: "it never waits for decisions" }))
})

/** The refusal of a message on a task that runs (the protocol's unsupported-operation error, -32004). */
export const taskIsRunning = (taskId: string): UnsupportedOperationError =>
  new UnsupportedOperationError(`task ${taskId} is running; wait for it to end or cancel it`)

/** An `AgentExecutor` that can also check a message before the SDK's handler starts a task for it. */
export interface TaskExecutor extends AgentExecutor {
  /**
   * Why `message` would be refused (malformed parts, or decisions that do not fit the waiting calls),
   * or `undefined`. `task` is the stored task it continues, when the store has it (after a restart the
   * executor knows a waiting task only from there).
   */
  readonly check: (message: Message, task?: Task) => Promise<string | undefined>
  /** Runs in flight. */
  readonly running: () => number
  /** True while task `taskId` has a run in flight. */
  readonly isRunning: (taskId: string) => boolean
  /**
   * Takes task `taskId` for the message that came with `owner` (the request handler's call context,
   * which `execute` reads back from its `RequestContext`), so a handler can refuse another message
   * before the SDK records it. Until every claim for that message is released and its execution has
   * ended, `execute` refuses any other message on the task. Gives what releases the claim, or
   * `undefined` when another message holds the task.
   */
  readonly claim: (taskId: string, owner: object) => (() => void) | undefined
  /**
   * Interrupts every run in flight (as `CancelTask` does: each task ends canceled); resolves once they
   * have all ended, their finalizers run and their last status published, so nothing of them runs after.
   */
  readonly interrupt: () => Promise<void>
}

/** How tasks become runs. */
export interface TaskExecutorOptions {
  /** Where each context's session keeps its messages (default: in memory, one store per context). */
  readonly sessions?: (contextId: string) => SessionOptions
  /**
   * The task store of the request handler the executor runs under. The SDK's `DefaultRequestHandler`
   * records a message in its task's history before `execute` sees it; with its store, a message
   * `execute` refuses (-32004, -32602) is taken back out. `serveA2a` refuses them before that.
   */
  readonly taskStore?: TaskStore
  /**
   * The event bus manager of the request handler the executor runs under (the one given to the
   * SDK's `DefaultRequestHandler`). That handler makes a new task's event bus before `execute` sees
   * the message, and removes it only when an execution settles: with the manager, the bus of a new
   * message `execute` refuses (-32602) is removed, so refused messages do not accumulate buses.
   * `serveA2a` refuses them before a bus is made.
   */
  readonly eventBusManager?: ExecutionEventBusManager
}

const now = () => new Date().toISOString()

const agentMessage = (taskId: string, contextId: string, parts: Message["parts"]): Message => ({
  messageId: crypto.randomUUID(),
  contextId,
  taskId,
  role: Role.ROLE_AGENT,
  parts: [...parts],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: []
})

/** A run's end, with `Suspended` told apart from a completed value (`Completed | Suspended` results). */
export const outcomeOfExit = (agent: string, exit: Exit.Exit<unknown, AgentError>): RunEndEvent["outcome"] => {
  const outcome = runOutcome(agent, exit)
  if (outcome._tag !== "Success") return outcome
  const value = outcome.output as { readonly _tag?: unknown; readonly output?: unknown; readonly pending?: any; readonly snapshot?: any } | null
  if (value !== null && typeof value === "object" && value._tag === "Suspended") return { _tag: "Suspended", pending: value.pending, snapshot: value.snapshot }
  if (value !== null && typeof value === "object" && value._tag === "Completed") return { _tag: "Success", output: value.output }
  return outcome
}

/**
 * The executor of `definition` (with its model or `.provide(...)` layers, as `run` would use them).
 *
 * @example
 * ```ts
 * const store = new InMemoryTaskStore()
 * const buses = new DefaultExecutionEventBusManager()
 * const handler = new DefaultRequestHandler(card, store, agentExecutor(definitionOf(helper), { taskStore: store, eventBusManager: buses }), buses)
 * ```
 */
export const agentExecutor = (definition: AgentDefinition, options: TaskExecutorOptions = {}): TaskExecutor =>
  taskExecutor(agentDriver(definition, options), options)

/**
 * How a message goes on: the run it starts, or why it is refused (the protocol's invalid params) with,
 * when its task still waits, the calls it waits on.
 */
type Admission =
  | { readonly _tag: "Admitted"; readonly start: (sink: EventSink) => Effect.Effect<unknown, AgentError> }
  | { readonly _tag: "Refused"; readonly reason: string; readonly pending?: ReadonlyArray<WaitingCall> | undefined }

/**
 * `effect`'s value now when nothing in it waits (as with sessions in memory), else a promise of it: the
 * same fiber goes on, nothing runs twice.
 */
const runNow = <A>(effect: Effect.Effect<A>): A | Promise<A> => {
  const exit = Effect.runSyncExit(effect)
  if (Exit.isSuccess(exit)) return exit.value
  const error = Cause.squash(exit.cause)
  return Cause.isAsyncFiberError(error) ? Effect.runPromise(Fiber.join(error.fiber as Fiber.Fiber<A>)) : Promise.reject(error)
}

/**
 * The executor over any task driver (see {@link agentDriver}, {@link runnableDriver}).
 *
 * @example
 * ```ts
 * const executor = taskExecutor(runnableDriver(pipeline("research", searcher, writer)))
 * ```
 */
export const taskExecutor = (driver: TaskDriver, options: Pick<TaskExecutorOptions, "taskStore" | "eventBusManager"> = {}): TaskExecutor => {
  const running = new Map<string, AbortController>()
  // The executions with a run in flight, until they have published their end (what `interrupt` waits for).
  const executions = new Set<Promise<void>>()
  const taskContexts = new Map<string, string>()
  // Tasks whose run waits for decisions in their context's session.
  const waitingTasks = new Map<string, string>()
  /**
   * The run task `taskId` waits on: known here, or read from the stored task (its metadata names the
   * run, `waitingRun`), so a server restarted on a persistent task store and sessions resumes it.
   */
  const waitingRunOf = (taskId: string, task: Task | undefined): string | undefined => {
    const known = waitingTasks.get(taskId)
    if (known !== undefined || task?.status?.state !== TaskState.TASK_STATE_INPUT_REQUIRED) return known
    const stored = (task.metadata as { readonly waitingRun?: unknown } | undefined)?.waitingRun
    return typeof stored === "string" && stored !== "" ? stored : undefined
  }
  const run = <A>(effect: Effect.Effect<A, AgentError>, signal?: AbortSignal) =>
    Effect.runPromiseExit(effect, signal === undefined ? undefined : { signal })
  const refused = (reason: string, pending?: ReadonlyArray<WaitingCall>): Admission => ({ _tag: "Refused", reason, pending })
  const reasonOf = (admission: Admission): string | undefined => (admission._tag === "Refused" ? admission.reason : undefined)

  /**
   * How `parts` go on in context `contextId`: as the input of a new task, or, in `reply` to task
   * `taskId` (`task` its stored copy, if any), as decisions that fit the calls its run waits on, checked
   * against the run's snapshot without running anything (an edit its tool's Schema refuses) and only
   * while its own run is the one its context keeps waiting. Runs nothing; reads only the session.
   */
  const admit = (parts: unknown, contextId: string, reply?: { readonly taskId: string; readonly task: Task | undefined }): Effect.Effect<Admission> => {
    if (reply === undefined) {
      const input = inputFromParts(parts, driver.input)
      if (Result.isFailure(input)) return Effect.succeed(refused(input.failure))
      return Effect.succeed({ _tag: "Admitted", start: (sink) => driver.send(contextId, input.success, sink) })
    }
    const { taskId } = reply
    const runId = waitingRunOf(taskId, reply.task)
    if (runId === undefined) return Effect.succeed(refused(`the run of task ${taskId} no longer waits for decisions`))
    return Effect.gen(function*() {
      const waiting = yield* Effect.orElseSucceed(driver.waiting(contextId), () => undefined)
      if (waiting?.runId !== runId) return refused(`the run of task ${taskId} no longer waits for decisions: a later task of its context is waiting`)
      const decisions = decisionsFromParts(parts, waiting.pending)
      if (Result.isFailure(decisions)) return refused(decisions.failure, waiting.pending)
      if (driver.checkResume !== undefined) {
        const checked = yield* Effect.exit(driver.checkResume(contextId, runId, decisions.success))
        if (Exit.isFailure(checked)) {
          const error = Cause.squash(checked.cause)
          return refused(error instanceof Error ? error.message : String(error), waiting.pending)
        }
      }
      return { _tag: "Admitted", start: (sink) => driver.resume(contextId, runId, decisions.success, sink) } satisfies Admission
    })
  }

  /**
   * `error`, the refusal of a message on an existing task, which the SDK's handler recorded in the
   * task's history before `execute` ran: with the handler's store, the message is being taken back out
   * (under the SDK's write lock for the task, so a status the running execution publishes meanwhile is kept).
   */
  const refusal = (context: RequestContext, error: Error, bus: ExecutionEventBus): Error => {
    if (options.taskStore !== undefined && context.task !== undefined && context.context !== undefined) {
      takeBackMessage(options.taskStore, context.context, context.taskId, context.userMessage.messageId).catch(() => undefined)
    }
    // A new task's bus is this message's alone (its id was made for it), so it goes with the refusal;
    // a stored task's may be shared with another message's call, and is reused by its next one.
    const buses = options.eventBusManager
    if (buses !== undefined && context.task === undefined && buses.getByTaskId(context.taskId, context.context) === bus) {
      buses.cleanupByTaskId(context.taskId, context.context)
    }
    return error
  }

  /**
   * The message each task is taken for: its owner (see `claim`) and how many hold the claim (the
   * handler admitting the message, the execution running it); a task is free when none does.
   */
  const claims = new Map<string, { readonly owner: object; holds: number }>()
  const claim = (taskId: string, owner: object): (() => void) | undefined => {
    const held = claims.get(taskId) ?? { owner, holds: 0 }
    if (held.owner !== owner) return undefined
    held.holds += 1
    claims.set(taskId, held)
    let released = false
    return () => {
      if (released) return
      released = true
      held.holds -= 1
      if (held.holds === 0) claims.delete(taskId)
    }
  }

  /**
   * Claims the task before anything else, synchronously, so that of two messages on one task (one
   * sent while its run is in flight, approvals of one waiting task sent at once) only one executes.
   * Only a new task, or one waiting for input, takes a message: a task stored as working runs here, or
   * ran on a server that stopped (`CancelTask` ends it). Then decides whether the message is
   * admitted, synchronously too when nothing it reads waits (sessions in memory). A refusal is
   * thrown rather than returned as a rejected promise: the SDK's `DefaultRequestHandler` then answers
   * the request with it (-32004, -32602) and publishes nothing on the task's event bus, which an
   * execution in flight shares; a rejection it would publish there as the failure of the task
   * (`_runExecutor`, `_runStreamExecutor` in `@a2a-js/sdk/dist/server/index.js`).
   */
  const execute = (context: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { task, taskId } = context
    const state = task?.status?.state
    // A `RequestContext` built by hand may have no call context: its own identity is the owner then.
    const release = task === undefined || state === TaskState.TASK_STATE_INPUT_REQUIRED
      ? claim(taskId, context.context ?? context)
      : undefined
    if (release === undefined) throw refusal(context, taskIsRunning(taskId), bus)
    const admission = runNow(admit(context.userMessage.parts, context.contextId, task === undefined ? undefined : { taskId, task }))
    if (!(admission instanceof Promise) && admission._tag === "Refused") {
      release()
      throw refusal(context, new RequestMalformedError(admission.reason), bus)
    }
    return executeClaimed(context, bus, admission).finally(release)
  }

  const executeClaimed = async (context: RequestContext, bus: ExecutionEventBus, admission: Admission | Promise<Admission>): Promise<void> => {
    const { taskId, contextId } = context
    const message = context.userMessage
    taskContexts.set(taskId, contextId)
    const status = (state: TaskState, parts?: Message["parts"], metadata?: Record<string, unknown>) =>
      bus.publish(AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: { state, message: parts === undefined ? undefined : agentMessage(taskId, contextId, parts), timestamp: now() },
        metadata
      }))
    const admitted = await admission
    if (admitted._tag === "Refused") {
      // Decided only now (a session store that reads asynchronously): too late to be the request's
      // error, so the task answers it. A new task's input is always decided in time (`admit` reads
      // nothing for it), so this is a reply to a waiting task (`context.task`): it keeps waiting while
      // its run does, and fails when its run no longer waits.
      const why = textPart(`the message was refused (invalid params): ${admitted.reason}`)
      bus.publish(AgentEvent.task(context.task!))
      if (admitted.pending === undefined) {
        waitingTasks.delete(taskId)
        taskContexts.delete(taskId)
        status(TaskState.TASK_STATE_FAILED, [why], { error: "InvalidParams" })
      } else {
        status(TaskState.TASK_STATE_INPUT_REQUIRED, [why, ...pendingParts(admitted.pending)])
      }
      bus.finished()
      return
    }
    const start = admitted.start
    if (context.task === undefined) {
      const task: Task = { id: taskId, contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() }, artifacts: [], history: [message], metadata: undefined }
      bus.publish(AgentEvent.task(task))
    } else {
      waitingTasks.delete(taskId)
      // A streamed reply to a waiting task opens with the task, as the SDK's handler requires of a stream.
      bus.publish(AgentEvent.task({ ...context.task, status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: now() } }))
    }
    status(TaskState.TASK_STATE_WORKING)
    let end: RunEndEvent | undefined
    const tokens = { inputTokens: 0, outputTokens: 0 }
    const sink: EventSink = (event) => {
      if (event._tag === "RunEnd") end = event
      else if (event._tag === "ModelResponse") {
        tokens.inputTokens += event.response.usage?.inputTokens ?? 0
        tokens.outputTokens += event.response.usage?.outputTokens ?? 0
      }
      else if (event._tag === "ToolUse") status(TaskState.TASK_STATE_WORKING, [textPart(`used ${event.tool}`)], { event: "ToolUse", tool: event.tool })
      else if (event._tag === "ToolError") status(TaskState.TASK_STATE_WORKING, [textPart(`${event.tool} failed`)], { event: "ToolError", tool: event.tool })
      else if (event._tag === "Handoff") status(TaskState.TASK_STATE_WORKING, [textPart("handed off")], { event: "Handoff" })
    }
    const controller = new AbortController()
    running.set(taskId, controller)
    let ended!: () => void
    const execution = new Promise<void>((resolve) => (ended = resolve))
    executions.add(execution)
    try {
      let exit: Exit.Exit<unknown, AgentError>
      try {
        exit = await run(start(sink), controller.signal)
      } finally {
        running.delete(taskId)
      }
      const outcome = outcomeOfExit(driver.name, exit)
      // What the run used, for clients that charge it to their own budgets (`a2aAgent` does).
      const usage = { usage: tokens, ...(end === undefined ? {} : { turns: end.turns, toolCalls: end.toolCalls, durationMs: end.durationMs }) }
      const final = taskStateOf(outcome)
      switch (outcome._tag) {
        case "Success":
          bus.publish(AgentEvent.artifactUpdate({
            taskId,
            contextId,
            artifact: { artifactId: `${taskId}-output`, name: "output", description: "", parts: [...outputParts(outcome.output)], metadata: undefined, extensions: [] },
            append: false,
            lastChunk: true,
            metadata: undefined
          }))
          status(final, undefined, usage)
          break
        case "Failure":
          status(final, [textPart(outcome.error.message)], { ...usage, error: outcome.error._tag })
          break
        case "Interrupted":
          status(final, [textPart("the run was canceled")], usage)
          break
        case "Suspended":
          waitingTasks.set(taskId, outcome.snapshot.state.runId)
          status(final, [...pendingParts(outcome.pending)], { ...usage, waitingRun: outcome.snapshot.state.runId })
          break
      }
      // Only a waiting task needs its context later (to check and resume its decisions).
      if (outcome._tag !== "Suspended") taskContexts.delete(taskId)
      bus.finished()
    } finally {
      executions.delete(execution)
      ended()
    }
  }

  const cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    const controller = running.get(taskId)
    // A run in flight ends as canceled through `execute`; a task without one is canceled here.
    if (controller !== undefined) return controller.abort()
    waitingTasks.delete(taskId)
    const contextId = taskContexts.get(taskId) ?? ""
    taskContexts.delete(taskId)
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: now() }, metadata: undefined }))
    bus.finished()
  }

  const check = async (message: Message, task?: Task): Promise<string | undefined> => {
    const taskId = message.taskId
    if (taskId === "" || taskId === undefined) return reasonOf(await runNow(admit(message.parts, message.contextId)))
    const contextId = taskContexts.get(taskId) ?? task?.contextId
    // A task this executor does not know, or one that does not wait: the SDK's handler answers it.
    if (contextId === undefined || waitingRunOf(taskId, task) === undefined) return undefined
    return reasonOf(await runNow(admit(message.parts, contextId, { taskId, task })))
  }

  const interrupt = async (): Promise<void> => {
    const inFlight = [...executions]
    for (const controller of running.values()) controller.abort()
    await Promise.all(inFlight)
  }

  return { execute, cancelTask, check, running: () => running.size, isRunning: (taskId) => running.has(taskId), claim, interrupt }
}
