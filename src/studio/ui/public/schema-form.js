// @ts-check
/**
 * A form generated from a JSON Schema: one labelled field per property of an object schema (text,
 * number, checkbox, a select for enums, a JSON text area for nested values), or one field for a
 * scalar schema. `read()` collects the value and validates it against the schema; the issues are
 * shown next to their fields (`aria-invalid`, `aria-describedby`) and in a summary read out by
 * screen readers, and nothing is returned until they are fixed.
 *
 * @example
 * const form = schemaForm(tool.jsonSchema, call.arguments, { idPrefix: "edit-1" })
 * container.append(form.element)
 * const result = form.read() // { ok: true, value } | { ok: false, issues }
 */
import { h } from "./dom.js"
import { deref, validate } from "./schema-validate.js"

/** @typedef {import("./schema-validate.js").Issue} Issue */
/** @typedef {{ [key: string]: unknown }} Schema */
/** @typedef {{ path: string, element: HTMLElement, control: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement, error: HTMLElement, read: () => { ok: true, value: unknown, present: boolean } | { ok: false, message: string } }} Field */

/** @param {unknown} value */
const isRecord = (value) => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The single type a field edits, or undefined when it needs JSON (unions, objects, arrays).
 * @param {Schema} schema
 * @returns {"string" | "number" | "integer" | "boolean" | "enum" | undefined}
 */
const fieldKind = (schema) => {
  if (Array.isArray(schema.enum) && schema.enum.every((option) => typeof option === "string")) return "enum"
  const type = schema.type
  if (type === "string" || type === "number" || type === "integer" || type === "boolean") return type
  return undefined
}

/**
 * @param {string} id
 * @param {string} label
 * @param {Schema} schema
 * @param {unknown} initial
 * @param {boolean} required
 * @returns {Field}
 */
const field = (id, label, schema, initial, required) => {
  const kind = fieldKind(schema)
  const errorId = `${id}-error`
  const error = h("div", { class: "field-error", id: errorId, role: "status" })
  const described = { "aria-describedby": errorId }
  /** @type {HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement} */
  let control
  /** @type {() => ({ ok: true, value: unknown, present: boolean } | { ok: false, message: string })} */
  let read
  if (kind === "boolean") {
    const input = /** @type {HTMLInputElement} */ (h("input", { id, type: "checkbox", checked: initial === true, ...described }))
    control = input
    read = () => ({ ok: true, value: input.checked, present: true })
  } else if (kind === "enum") {
    const options = /** @type {string[]} */ (schema.enum)
    const select = /** @type {HTMLSelectElement} */ (h("select", { id, ...described }, required ? null : h("option", { value: "" }, "(none)"), options.map((option) => h("option", { value: option }, option))))
    select.value = typeof initial === "string" ? initial : required ? options[0] ?? "" : ""
    control = select
    read = () => (select.value === "" && !required ? { ok: true, value: undefined, present: false } : { ok: true, value: select.value, present: true })
  } else if (kind === "number" || kind === "integer") {
    const input = /** @type {HTMLInputElement} */ (h("input", { id, type: "text", inputmode: kind === "integer" ? "numeric" : "decimal", value: typeof initial === "number" ? String(initial) : "", ...described }))
    control = input
    read = () => {
      const text = input.value.trim()
      if (text === "") return { ok: true, value: undefined, present: false }
      const number = Number(text)
      if (!Number.isFinite(number)) return { ok: false, message: `"${text}" is not a number` }
      return { ok: true, value: number, present: true }
    }
  } else if (kind === "string") {
    const long = typeof schema.maxLength !== "number" || schema.maxLength > 120
    const text = typeof initial === "string" ? initial : ""
    const input = long && text.length > 60
      ? /** @type {HTMLTextAreaElement} */ (h("textarea", { id, rows: 3, value: text, ...described }))
      : /** @type {HTMLInputElement} */ (h("input", { id, type: "text", value: text, ...described }))
    control = input
    read = () => (input.value === "" && !required ? { ok: true, value: undefined, present: false } : { ok: true, value: input.value, present: true })
  } else {
    const text = initial === undefined ? "" : JSON.stringify(initial, null, 2)
    const area = /** @type {HTMLTextAreaElement} */ (h("textarea", { id, rows: Math.min(12, Math.max(3, text.split("\n").length)), class: "mono", spellcheck: "false", value: text, ...described }))
    control = area
    read = () => {
      const source = area.value.trim()
      if (source === "") return { ok: true, value: undefined, present: false }
      try {
        return { ok: true, value: JSON.parse(source), present: true }
      } catch (cause) {
        return { ok: false, message: `not valid JSON: ${cause instanceof Error ? cause.message : String(cause)}` }
      }
    }
  }
  const description = typeof schema.description === "string" ? h("div", { class: "field-hint" }, schema.description) : null
  const typeHint = kind === undefined ? " (JSON)" : ""
  const element = h(
    "div",
    { class: `field field-${kind ?? "json"}` },
    h("label", { for: id }, label, typeHint, required ? h("span", { class: "required", "aria-hidden": "true" }, " *") : null),
    description,
    control,
    error
  )
  if (required) control.setAttribute("aria-required", "true")
  return { path: label, element, control, error, read }
}

/**
 * @param {unknown} jsonSchema
 * @param {unknown} initial
 * @param {{ idPrefix: string, onSubmit?: () => void }} options
 * @returns {{ element: HTMLElement, read: () => ({ ok: true, value: unknown } | { ok: false, issues: Issue[] }), focus: () => void }}
 */
export const schemaForm = (jsonSchema, initial, options) => {
  const root = isRecord(jsonSchema) ? /** @type {Schema} */ (jsonSchema) : {}
  const schema = deref(root, root)
  const summary = h("div", { class: "form-issues", role: "alert" })
  const properties = isRecord(schema.properties) ? /** @type {Schema} */ (schema.properties) : undefined
  const objectForm = (schema.type === "object" || properties !== undefined) && properties !== undefined
  const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : [])
  const initialRecord = isRecord(initial) ? /** @type {Schema} */ (initial) : {}
  /** @type {Field[]} */
  const fields = objectForm
    ? Object.entries(/** @type {Schema} */ (properties)).map(([key, propertySchema], index) =>
      field(`${options.idPrefix}-f${index}`, key, deref(root, propertySchema), initialRecord[key], required.has(key)))
    : [field(`${options.idPrefix}-value`, typeof schema.title === "string" ? schema.title : "value", schema, initial, true)]
  // Properties the schema does not list but the value has (an open object) stay as they were.
  const extra = objectForm ? Object.fromEntries(Object.entries(initialRecord).filter(([key]) => !(key in /** @type {Schema} */ (properties)))) : {}
  for (const item of fields) {
    item.control.addEventListener("keydown", (event) => {
      const keyboard = /** @type {KeyboardEvent} */ (event)
      if (keyboard.key === "Enter" && (keyboard.ctrlKey || keyboard.metaKey)) options.onSubmit?.()
    })
  }
  const element = h("div", { class: "schema-form" }, fields.map((item) => item.element), summary)

  /** @param {Issue[]} issues */
  const show = (issues) => {
    for (const item of fields) {
      // A scalar form has one field: every issue is its own.
      const mine = issues.filter((issue) => !objectForm || issue.path === item.path || issue.path.startsWith(`${item.path}.`) || issue.path.startsWith(`${item.path}[`))
      item.error.textContent = mine.map((issue) => issue.message).join("; ")
      if (mine.length > 0) item.control.setAttribute("aria-invalid", "true")
      else item.control.removeAttribute("aria-invalid")
    }
    summary.replaceChildren(...(issues.length === 0 ? [] : [h("p", {}, `${issues.length} problem${issues.length === 1 ? "" : "s"}:`), h("ul", {}, issues.map((issue) => h("li", {}, issue.path === "" ? issue.message : `${issue.path}: ${issue.message}`)))]))
  }

  const read = () => {
    /** @type {Issue[]} */
    const parseIssues = []
    /** @type {unknown} */
    let value
    if (objectForm) {
      /** @type {Schema} */
      const object = { ...extra }
      for (const item of fields) {
        const result = item.read()
        if (!result.ok) parseIssues.push({ path: item.path, message: result.message })
        else if (result.present) object[item.path] = result.value
      }
      value = object
    } else {
      const only = /** @type {Field} */ (fields[0])
      const result = only.read()
      if (!result.ok) parseIssues.push({ path: "", message: result.message })
      value = result.ok ? result.value : undefined
    }
    const issues = parseIssues.length > 0 ? parseIssues : validate(root, value)
    show(issues)
    if (issues.length > 0) {
      const first = fields.find((item) => item.control.getAttribute("aria-invalid") === "true")
      first?.control.focus()
      return /** @type {const} */ ({ ok: false, issues })
    }
    return /** @type {const} */ ({ ok: true, value })
  }
  return { element, read, focus: () => fields[0]?.control.focus() }
}
