/**
 * A readable compile error: a type no value has, whose name carries the message. Used where the
 * builder must refuse a call (`run` before `.model(...)`, a tool key registered twice).
 */
export interface TypeError<Message extends string> {
  readonly "~typeError": Message
}
