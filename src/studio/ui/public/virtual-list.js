// @ts-check
/**
 * A list that builds only the rows in view (plus a few above and below), so 5,000 events or 10,000
 * runs cost the same few dozen elements as twenty. Rows have one fixed height; the scroll area is
 * sized by a spacer. Rows are re-rendered on scroll, resize and `refresh()`.
 *
 * @example
 * const list = virtualList({ rowHeight: 32, label: "Events", renderRow: (i) => h("div", {}, String(i)) })
 * list.setCount(5000)
 */
import { h } from "./dom.js"

/**
 * @param {{ rowHeight: number, label: string, renderRow: (index: number) => HTMLElement, height?: string, overscan?: number }} options
 */
export const virtualList = (options) => {
  const overscan = options.overscan ?? 8
  const spacer = h("div", { class: "vlist-spacer" })
  const rows = h("div", { class: "vlist-rows", role: "list", "aria-label": options.label })
  const element = h("div", { class: "vlist", tabindex: "0", style: `height: ${options.height ?? "60vh"}` }, spacer, rows)
  let count = 0
  let first = -1
  let last = -1
  let frame = 0

  const render = (force = false) => {
    frame = 0
    const viewport = element.clientHeight || 600
    const start = Math.max(0, Math.floor(element.scrollTop / options.rowHeight) - overscan)
    const end = Math.min(count, Math.ceil((element.scrollTop + viewport) / options.rowHeight) + overscan)
    if (!force && start === first && end === last) return
    first = start
    last = end
    const fragment = document.createDocumentFragment()
    for (let index = start; index < end; index++) {
      // The row (a link or a button) keeps its own role inside a list item that carries its position.
      const item = h("div", { class: "vlist-item", role: "listitem", "aria-setsize": String(count), "aria-posinset": String(index + 1) }, options.renderRow(index))
      item.style.height = `${options.rowHeight}px`
      fragment.append(item)
    }
    rows.style.transform = `translateY(${start * options.rowHeight}px)`
    rows.replaceChildren(fragment)
  }
  const schedule = () => {
    if (frame === 0) frame = requestAnimationFrame(() => render())
  }
  element.addEventListener("scroll", schedule, { passive: true })
  if (typeof ResizeObserver !== "undefined") new ResizeObserver(schedule).observe(element)

  return {
    element,
    /**
     * Sets the number of rows; `follow` keeps the view at the bottom when it was there (a live log).
     * @param {number} next
     * @param {{ follow?: boolean }} [how]
     */
    setCount: (next, how = {}) => {
      const atBottom = element.scrollTop + element.clientHeight >= element.scrollHeight - options.rowHeight * 2
      count = next
      spacer.style.height = `${count * options.rowHeight}px`
      // A short list takes only the room it needs.
      element.style.height = `min(${options.height ?? "60vh"}, ${Math.max(count, 3) * options.rowHeight + 2}px)`
      if (how.follow === true && atBottom) element.scrollTop = element.scrollHeight
      render(true)
    },
    /** Re-renders the rows in view (their data changed). */
    refresh: () => render(true),
    /**
     * Scrolls a row into view.
     * @param {number} index
     */
    scrollTo: (index) => {
      element.scrollTop = index * options.rowHeight
      render(true)
    }
  }
}
