/**
 * The error of the AG-UI border: a request body that is not a `RunAgentInput` this server can run.
 */
import * as Data from "effect/Data"
import { AgentErrorTypeId } from "../../internal/agent-error-marker.ts"

/**
 * An AG-UI request body did not decode as a `RunAgentInput` (not JSON, a field of the wrong type, a
 * string or list over its limit), or asked for something a run cannot do: a system or developer
 * message from the client, a client tool whose name or JSON Schema a tool cannot have, or that clashes
 * with a server tool, an answer to a call or interrupt the waiting run did not ask about, or a waiting
 * call left unanswered. `issues` lists what was wrong (at most 2,000 characters). `agUiHandler`
 * answers it with status 400.
 *
 * @example
 * ```ts
 * try { fromRunAgentInput(body) } catch (e) { if (e instanceof AgUiInputInvalid) console.error(e.issues) }
 * ```
 */
export class AgUiInputInvalid extends Data.TaggedError("AgUiInputInvalid")<{
  readonly issues: string
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    return `The request is not a RunAgentInput this agent can run:\n${this.issues}`
  }
}

const maxIssues = 2_000

/** An `AgUiInputInvalid` with its issues cut to 2,000 characters. */
export const agUiInvalid = (issues: string): AgUiInputInvalid =>
  new AgUiInputInvalid({ issues: issues.length > maxIssues ? `${issues.slice(0, maxIssues)}…` : issues })

/**
 * A tool read or changed the AG-UI shared state of a run that has none: the run was not started by
 * `agUiHandler({ state })` (or given the state's cell with `cell.provide`), or it has another state.
 *
 * @example
 * ```ts
 * recipe.get.pipe(Effect.catchTag("AgUiStateUnavailable", () => Effect.succeed(emptyRecipe)))
 * ```
 */
export class AgUiStateUnavailable extends Data.TaggedError("AgUiStateUnavailable")<{
  readonly state: string
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    return `The AG-UI state "${this.state}" is not available in this run (serve the agent with agUiHandler(agent, { state }), or provide a cell)`
  }
}

/**
 * A new value of the AG-UI shared state did not encode with its Schema (or is not JSON): the state
 * is left as it was. `issues` says why.
 *
 * @example
 * ```ts
 * recipe.set(draft).pipe(Effect.catchTag("AgUiStateInvalid", (e) => Effect.succeed(e.issues)))
 * ```
 */
export class AgUiStateInvalid extends Data.TaggedError("AgUiStateInvalid")<{
  readonly state: string
  readonly issues: string
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    return `The new value of the AG-UI state "${this.state}" is invalid (the state is unchanged):\n${this.issues}`
  }
}
