/**
 * A readable compile error: a type no value has, whose name carries the message. Used where the
 * builder must refuse a call (`run` before `.model(...)`, a tool key registered twice). Prefixed, as
 * Kysely's `KyselyTypeError`, so it never shadows the global `TypeError`.
 *
 * @example
 * ```ts
 * type Refused = AgentTypeError<"call .model(...) before .run(...)">
 * ```
 */
export interface AgentTypeError<Message extends string> {
  readonly "~typeError": Message
}
