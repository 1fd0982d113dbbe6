/**
 * A readable compile error: a type no value has, whose name and argument carry the message. Used where
 * the builder must refuse a call (`run` before `.model(...)`, a tool key registered twice, a handle of
 * another agent). The prefix keeps it from shadowing the global `TypeError`.
 *
 * @example
 * ```ts
 * type Refused = AgentTypeError<"call .model(...) before .run(...)">
 * ```
 */
export interface AgentTypeError<Message extends string> {
  readonly "~agentTypeError": Message
}
