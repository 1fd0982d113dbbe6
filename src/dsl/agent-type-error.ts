/**
 * A readable compile error: a type no value has, whose name and argument carry the message. Used where
 * the builder must refuse a call (`run` before `.model(...)`, a tool key registered twice, a handle of
 * another agent, services still missing). The prefix keeps it from shadowing the global `TypeError`.
 *
 * @example
 * ```ts
 * type Refused = AgentTypeError<"call .model(...) before .run(...)">
 * type Missing = AgentTypeError<"provide these services with .provide(layer) before .run(...)", Database>
 * ```
 */
export interface AgentTypeError<Message extends string, Detail = never> {
  readonly "~agentTypeError": Message
  /** What the message is about, when it names types: the missing services of `run`. */
  readonly "~detail"?: Detail
}
