/**
 * Virtual time for scripted runs (`runScript`): a `Clock` whose time starts at a fixed instant and moves
 * only when the run has nothing left to do but wait for it. Then it jumps to the earliest sleep and
 * wakes that sleeper, so timeouts, backoffs and durations come out the same on every machine and take
 * no wall time. A sleep of 10 s under a `maxDuration` of 1 s is a timeout at 1 s, decided at once.
 *
 * Why not Effect's `TestClock`: it moves only when a test calls `adjust` or `setTime`, and a harness
 * running a whole agent cannot know when or how far (its sleeps are private); it also needs a Scope and
 * starts a live-clock warning fiber. What is needed here is the reverse: a clock that advances itself
 * exactly when the run is idle.
 *
 * Idle means that no task of the run waits in Effect's scheduler (the run gets a scheduler that counts
 * them), the microtask queue is empty (idleness is checked from a macrotask), and nothing the run
 * started outside Effect is in flight: a timer, a file or network request, a socket or child process
 * still referenced. Those are seen with `async_hooks`, for resources created in the run's async context
 * (`enter`). So a tool awaiting real I/O takes no virtual time and a timeout never overtakes it, however
 * slow the machine. Promises are not counted: one that never settles must not hold time (a hung tool
 * is what `maxDuration` is for). `async_hooks.createHook` is a discouraged API, but the only one that
 * sees a timer or a request in flight; its hook is enabled only while a run in virtual time is in
 * progress. Outside Node (no `async_hooks`) only Effect's own work is seen.
 *
 * Time stops when the run ends (`stop`): a fiber still asleep then (a detached hook past the run's
 * end) is left asleep.
 */
import type * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Scheduler from "effect/Scheduler"

/** The virtual time of one run. */
export interface VirtualTime {
  readonly clock: Clock.Clock
  /** Effect's scheduler, counting the tasks it holds (a run with a task waiting is not idle). */
  readonly scheduler: Scheduler.Scheduler
  /** Calls `f` in the run's async context: what it starts (timers, I/O) holds time while in flight. */
  readonly enter: <A>(f: () => A) => A
  /** Stops time: no sleeper wakes any more. */
  readonly stop: () => void
}

interface Sleeper {
  readonly at: number
  readonly wake: () => void
}

/**
 * Virtual time starting at `startAt` (epoch milliseconds).
 *
 * @example
 * ```ts
 * const time = virtualTime(Date.UTC(2025, 0, 1))
 * const context = Context.make(Clock.Clock, time.clock).pipe(Context.add(Scheduler.Scheduler, time.scheduler))
 * try {
 *   await time.enter(() => Effect.runPromiseWith(context)(Effect.sleep("1 hour"))) // at once
 * } finally {
 *   time.stop()
 * }
 * ```
 */
export const virtualTime = (startAt: number): VirtualTime => {
  let now = startAt
  let stopped = false
  let queued = 0
  // Earliest first; sleepers due at the same instant wake in the order they fell asleep.
  const sleepers: Array<Sleeper> = []
  const work = inFlight()
  let polling = false
  // Since when real work has held time (wall clock), to say so once if it holds it for long.
  let heldSince: number | undefined
  let warned = false

  const poll = () => {
    polling = false
    if (stopped || sleepers.length === 0) return
    if (queued > 0) return schedulePoll(false)
    const holding = work?.holding() ?? []
    if (holding.length > 0) {
      heldSince ??= performance.now()
      if (!warned && performance.now() - heldSince > warnAfterMs) {
        warned = true
        console.warn(heldWarning(holding))
      }
      return schedulePoll(true)
    }
    heldSince = undefined
    const next = sleepers.shift()!
    now = Math.max(now, next.at)
    next.wake()
    schedulePoll(false)
  }
  // Looked at again on the next turn of the event loop, or a millisecond later while real work is in
  // flight. The poll's own timer is not the run's work: it must not hold time itself.
  const schedulePoll = (later: boolean) => {
    if (polling || stopped || sleepers.length === 0) return
    polling = true
    const arm = () => (later || typeof setImmediate !== "function" ? void setTimeout(poll, later ? 1 : 0) : void setImmediate(poll))
    if (work === undefined) arm()
    else work.outside(arm)
  }

  const sleep = (duration: Duration.Duration): Effect.Effect<void> => {
    const millis = Duration.toMillis(duration)
    if (millis <= 0) return Effect.yieldNow
    if (!Number.isFinite(millis)) return Effect.never
    return Effect.callback<void>((resume) => {
      const sleeper: Sleeper = { at: now + millis, wake: () => resume(Effect.void) }
      let i = sleepers.length
      while (i > 0 && sleepers[i - 1]!.at > sleeper.at) i--
      sleepers.splice(i, 0, sleeper)
      schedulePoll(false)
      return Effect.sync(() => {
        const index = sleepers.indexOf(sleeper)
        if (index !== -1) sleepers.splice(index, 1)
      })
    })
  }

  const millis = () => Math.floor(now)
  const nanos = () => BigInt(millis()) * 1_000_000n + BigInt(Math.round((now - millis()) * 1_000_000))
  const elapsedNanos = () => nanos() - BigInt(startAt) * 1_000_000n
  const clock: Clock.Clock = {
    currentTimeMillisUnsafe: millis,
    currentTimeMillis: Effect.sync(millis),
    currentTimeNanosUnsafe: nanos,
    currentTimeNanos: Effect.sync(nanos),
    monotonicTimeNanosUnsafe: elapsedNanos,
    monotonicTimeNanos: Effect.sync(elapsedNanos),
    sleep
  }

  const parent = new Scheduler.MixedScheduler()
  const scheduler: Scheduler.Scheduler = {
    executionMode: parent.executionMode,
    shouldYield: (fiber) => parent.shouldYield(fiber),
    makeDispatcher: () => {
      const dispatcher = parent.makeDispatcher()
      return {
        scheduleTask: (task, priority) => {
          queued++
          dispatcher.scheduleTask(() => {
            queued--
            task()
          }, priority)
        },
        flush: () => dispatcher.flush()
      }
    }
  }

  return {
    clock,
    scheduler,
    enter: (f) => (work === undefined ? f() : work.enter(f)),
    stop: () => {
      stopped = true
      sleepers.length = 0
      work?.release()
    }
  }
}

const warnAfterMs = 5_000

const heldWarning = (holding: ReadonlyArray<string>): string =>
  `runScript: virtual time has waited ${warnAfterMs / 1000} s for work the run started outside Effect (${[...new Set(holding)].join(", ")}). ` +
  "Time does not pass while a timer, request, socket or child process the run started is in flight; one left open (an interval, a server) " +
  `holds it for good: close or unref it, or run with { clock: "live" }.`

/** What the run started outside Effect and is still in flight. */
interface InFlight {
  /** The types of the resources in flight that hold time (empty when none). */
  readonly holding: () => ReadonlyArray<string>
  readonly enter: <A>(f: () => A) => A
  /** Calls `f`, whose timers are not the run's. */
  readonly outside: (f: () => void) => void
  readonly release: () => void
}

type AsyncHooks = typeof import("node:async_hooks")

/** The resources of one run in flight, with their types, by async id. */
type Resources = Map<number, { readonly type: string; readonly resource: object }>

/** One hook for every run in virtual time, enabled while one is in progress. */
interface Tracking {
  readonly storage: InstanceType<AsyncHooks["AsyncLocalStorage"]>
  readonly hook: ReturnType<AsyncHooks["createHook"]>
  readonly owners: Map<number, Resources>
  runs: number
}

let tracking: Tracking | undefined | null = undefined
/** Set while a poll's own timer is made (`InFlight.outside`). */
let arming = false

const trackingOf = (): Tracking | undefined => {
  if (tracking !== undefined) return tracking ?? undefined
  const hooks = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.("node:async_hooks") as
    | AsyncHooks
    | undefined
  if (hooks === undefined) {
    tracking = null
    return undefined
  }
  const storage = new hooks.AsyncLocalStorage<Resources>()
  const owners = new Map<number, Resources>()
  const hook = hooks.createHook({
    init: (id, type, _trigger, resource) => {
      if (arming || !isNodeWork(type)) return
      const resources = storage.getStore()
      if (resources === undefined) return
      resources.set(id, { type, resource: resource as object })
      owners.set(id, resources)
    },
    destroy: (id) => {
      const resources = owners.get(id)
      if (resources === undefined) return
      owners.delete(id)
      resources.delete(id)
    }
  })
  return (tracking = { storage, hook, owners, runs: 0 })
}

/**
 * Node's own timers, requests and handles (`Timeout`, `Immediate`, `FSREQCALLBACK`, `TCPWRAP`, ...):
 * real work in flight. Not promises (see the header), not a library's `AsyncResource` (Effect makes one
 * per suspended fiber, `effect/Fiber`: a context, not work), and not `process.nextTick` or
 * `queueMicrotask` callbacks, which have all run by the time a macrotask looks.
 */
const isNodeWork = (type: string): boolean => type === "Timeout" || type === "Immediate" || (type !== "PROMISE" && /^[A-Z0-9_]+$/.test(type))

/** The process's standard streams, made on first use (maybe inside a run) and open for good. */
const isStdio = (resource: object): boolean => {
  const stdio = (globalThis as { process?: Record<"stdin" | "stdout" | "stderr", { _handle?: unknown } | undefined> }).process
  return stdio !== undefined && (resource === stdio.stdout?._handle || resource === stdio.stderr?._handle || resource === stdio.stdin?._handle)
}

/**
 * Whether `resource` still holds time: not a timer that has fired or was cleared (its `destroy` hook
 * comes a turn later), not a handle or timer that is `unref`'d, not a standard stream.
 */
const holds = (resource: object): boolean => {
  const { hasRef, _destroyed } = resource as { hasRef?: unknown; _destroyed?: unknown }
  return _destroyed !== true && (typeof hasRef !== "function" || hasRef.call(resource) === true) && !isStdio(resource)
}

const inFlight = (): InFlight | undefined => {
  const shared = trackingOf()
  if (shared === undefined) return undefined
  const resources: Resources = new Map()
  if (shared.runs++ === 0) shared.hook.enable()
  let released = false
  return {
    holding: () => {
      const types: Array<string> = []
      for (const { type, resource } of resources.values()) if (holds(resource)) types.push(type)
      return types
    },
    enter: (f) => shared.storage.run(resources, f),
    outside: (f) => {
      arming = true
      try {
        f()
      } finally {
        arming = false
      }
    },
    release: () => {
      if (released) return
      released = true
      for (const id of resources.keys()) shared.owners.delete(id)
      resources.clear()
      if (--shared.runs === 0) shared.hook.disable()
    }
  }
}
