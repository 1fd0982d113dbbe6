// @ts-check
/**
 * The studio's whole "framework": `h` builds an element from a tag, attributes and children; `mount`
 * replaces a container's content. Views re-render their own region; nothing diffs a tree.
 *
 * @example
 * mount(document.body, h("button", { onclick: () => alert("hi"), "aria-label": "Greet" }, "Hi"))
 */

/** @typedef {Node | string | number | null | undefined | false | ReadonlyArray<unknown>} Child a node, text, nothing, or an array of children */

/**
 * Creates an element. Attributes starting with `on` are listeners; `class`, `style` (a string), `for`,
 * `aria-*`, `data-*` and the rest are set as attributes; boolean `true` sets an empty attribute and
 * `false`/`undefined`/`null` leaves it out. `value` and `checked` are set as properties.
 * @param {string} tag
 * @param {{ [key: string]: unknown }} [attributes]
 * @param {...Child} children
 * @returns {HTMLElement}
 */
export const h = (tag, attributes = {}, ...children) => {
  const element = document.createElement(tag)
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue
    if (key.startsWith("on") && typeof value === "function") {
      element.addEventListener(key.slice(2).toLowerCase(), /** @type {EventListener} */ (value))
    } else if (key === "value" || key === "checked") {
      /** @type {any} */ (element)[key] = value
    } else {
      element.setAttribute(key, value === true ? "" : String(value))
    }
  }
  append(element, children)
  return element
}

/**
 * Appends children (strings become text nodes, arrays are flattened, empty values skipped).
 * @param {Node} parent
 * @param {ReadonlyArray<Child>} children
 */
export const append = (parent, children) => {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue
    if (Array.isArray(child)) append(parent, child)
    else if (child instanceof Node) parent.appendChild(child)
    else parent.appendChild(document.createTextNode(String(child)))
  }
}

/**
 * Replaces the content of `container`.
 * @param {Element} container
 * @param {...Child} children
 */
export const mount = (container, ...children) => {
  container.replaceChildren()
  append(container, children)
}

/** A lone surrogate: half of a UTF-16 pair without its other half. */
const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

/**
 * One segment of a path or hash (`#/runs/<id>`, `/api/runs/<id>`) for any text: `encodeURIComponent`
 * throws on a lone surrogate (a run id an application sent), which would take a whole list down; the
 * server stores such ids with U+FFFD in its place, so the segment names the same run.
 * @param {unknown} text
 */
export const pathPart = (text) => encodeURIComponent(String(text).replace(loneSurrogate, "\ufffd"))

/**
 * A duration for people: `850 ms`, `1.2 s`, `3 min 4 s`.
 * @param {number | undefined} ms
 */
export const formatDuration = (ms) => {
  if (ms === undefined || !Number.isFinite(ms)) return "—"
  if (ms < 1000) return `${Math.round(ms)} ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`
}

/**
 * A time of day, or a date and time when not today.
 * @param {string | number | undefined} at
 */
export const formatTime = (at) => {
  if (at === undefined) return "—"
  const date = new Date(at)
  if (Number.isNaN(date.getTime())) return String(at)
  const today = new Date().toDateString() === date.toDateString()
  return today ? date.toLocaleTimeString() : date.toLocaleString()
}

/**
 * A number with thousands separators.
 * @param {number | undefined} n
 */
export const formatCount = (n) => (n === undefined || !Number.isFinite(n) ? "—" : n.toLocaleString("en-US"))

/**
 * A short, readable text for an error of any shape (a tagged error, an Error, a string, anything).
 * @param {unknown} error
 * @returns {string}
 */
export const describeError = (error) => {
  if (error === undefined || error === null) return ""
  if (typeof error === "string") return error
  if (typeof error === "object") {
    const record = /** @type {{ [key: string]: unknown }} */ (error)
    const tag = typeof record._tag === "string" ? record._tag : typeof record.name === "string" ? record.name : undefined
    const message = typeof record.message === "string" ? record.message : undefined
    if (tag !== undefined && message !== undefined) return `${tag}: ${message}`
    if (message !== undefined) return message
    if (tag !== undefined) return tag
  }
  try {
    return JSON.stringify(error).slice(0, 500)
  } catch {
    return String(error)
  }
}

/**
 * A status badge: colour from the status, text for screen readers and everyone else.
 * @param {string} status
 */
export const statusBadge = (status) => h("span", { class: `badge status-${status}` }, status)
