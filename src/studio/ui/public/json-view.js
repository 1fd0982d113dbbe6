// @ts-check
/**
 * A JSON viewer that never freezes the page: objects and arrays are `<details>` whose children are
 * built only when opened, arrays show 100 items at a time, and long strings show their first 2,000
 * characters with a button that reveals 64 KB more per click. A 5 MB tool result costs a few
 * elements until someone asks for more.
 *
 * @example
 * container.append(jsonView({ a: [1, 2, 3] }, { open: true }))
 */
import { h } from "./dom.js"

const stringPreview = 2_000
const stringStep = 64_000
const arrayStep = 100

/**
 * @param {unknown} value
 * @returns {string}
 */
const kindOf = (value) => (value === null ? "null" : Array.isArray(value) ? "array" : typeof value)

/**
 * A long string, shown piece by piece.
 * @param {string} text
 */
const stringView = (text) => {
  if (text.length <= stringPreview) return h("span", { class: "json-string" }, JSON.stringify(text))
  let shown = stringPreview
  const body = h("span", { class: "json-string" }, JSON.stringify(text.slice(0, shown)).slice(0, -1))
  const more = h("button", { type: "button", class: "link" }, "")
  const label = () => {
    more.textContent = `… show more (${(text.length - shown).toLocaleString("en-US")} more characters)`
  }
  label()
  more.addEventListener("click", () => {
    const next = Math.min(text.length, shown + stringStep)
    body.append(JSON.stringify(text.slice(shown, next)).slice(1, -1))
    shown = next
    if (shown >= text.length) {
      body.append("\"")
      more.remove()
    } else label()
  })
  return h("span", { class: "json-long" }, body, more)
}

/**
 * @param {unknown} value
 * @returns {HTMLElement}
 */
const leaf = (value) => {
  switch (kindOf(value)) {
    case "string":
      return stringView(/** @type {string} */ (value))
    case "number":
    case "bigint":
      return h("span", { class: "json-number" }, String(value))
    case "boolean":
      return h("span", { class: "json-boolean" }, String(value))
    case "null":
      return h("span", { class: "json-null" }, "null")
    case "undefined":
      return h("span", { class: "json-null" }, "undefined")
    default:
      return h("span", {}, String(value))
  }
}

/**
 * @param {unknown} value
 */
const summaryOf = (value) => {
  if (Array.isArray(value)) return `[ ${value.length.toLocaleString("en-US")} item${value.length === 1 ? "" : "s"} ]`
  const keys = Object.keys(/** @type {object} */ (value))
  const names = keys.slice(0, 4).join(", ")
  return `{ ${names}${keys.length > 4 ? `, … ${keys.length - 4} more` : ""} }`
}

/**
 * @param {string | number | undefined} key
 * @param {unknown} value
 * @param {boolean} open
 * @returns {HTMLElement}
 */
const node = (key, value, open) => {
  const label = key === undefined ? null : h("span", { class: "json-key" }, typeof key === "number" ? `${key}: ` : `${JSON.stringify(key)}: `)
  const kind = kindOf(value)
  if (kind !== "object" && kind !== "array") return h("div", { class: "json-row" }, label, leaf(value))
  const entries = Array.isArray(value) ? value.map((item, index) => /** @type {[number, unknown]} */ ([index, item])) : Object.entries(/** @type {object} */ (value))
  if (entries.length === 0) return h("div", { class: "json-row" }, label, h("span", { class: "json-punct" }, Array.isArray(value) ? "[]" : "{}"))
  const details = h("details", { class: "json-node" })
  const summary = h("summary", {}, label, h("span", { class: "json-summary" }, summaryOf(value)))
  const children = h("div", { class: "json-children" })
  details.append(summary, children)
  let rendered = 0
  const more = h("button", { type: "button", class: "link json-more" }, "")
  const renderMore = () => {
    const next = Math.min(entries.length, rendered + arrayStep)
    const fragment = document.createDocumentFragment()
    for (const [childKey, childValue] of entries.slice(rendered, next)) fragment.append(node(childKey, childValue, false))
    children.insertBefore(fragment, more.isConnected ? more : null)
    rendered = next
    if (rendered < entries.length) {
      more.textContent = `show ${Math.min(arrayStep, entries.length - rendered)} more of ${(entries.length - rendered).toLocaleString("en-US")}`
      if (!more.isConnected) children.append(more)
    } else more.remove()
  }
  more.addEventListener("click", renderMore)
  details.addEventListener("toggle", () => {
    if (/** @type {HTMLDetailsElement} */ (details).open && rendered === 0) renderMore()
  })
  if (open) {
    /** @type {HTMLDetailsElement} */ (details).open = true
    renderMore()
  }
  return details
}

/**
 * A collapsible view of any JSON value; `open` opens the top level. Strings that hold JSON (tool
 * arguments as the model sent them) are shown parsed when `parseStrings` is set.
 * @param {unknown} value
 * @param {{ open?: boolean, parseStrings?: boolean, label?: string }} [options]
 */
export const jsonView = (value, options = {}) => {
  let shown = value
  if (options.parseStrings === true && typeof value === "string" && value.length < 1_000_000) {
    const trimmed = value.trim()
    if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
      try {
        shown = JSON.parse(trimmed)
      } catch {
        shown = value
      }
    }
  }
  return h("div", { class: "json", ...(options.label === undefined ? {} : { "aria-label": options.label }) }, node(undefined, shown, options.open ?? false))
}
