/**
 * The agent: the support assistant of a small coffee shop. `lookupOrder` runs whenever the model calls
 * it; `refundOrder` moves money, so every call of it waits for a human decision (`needsApproval`) and
 * runs only once someone approved that exact call. Replace the tools with your own.
 */
import { Schema } from "effect"
import { agent, type ModelClient, tool } from "effect-agent-dsl"

interface Order {
  readonly item: string
  readonly status: string
  readonly total: number
}

/** A stand-in for your database. */
const orders: ReadonlyMap<string, Order> = new Map([
  ["A-1001", { item: "espresso machine", status: "delivered yesterday", total: 249 }],
  ["A-1002", { item: "coffee grinder", status: "shipped, arriving Friday", total: 89 }]
])
const refunded = new Set<string>()

const OrderId = Schema.String.annotate({ description: "the order id, like A-1001" })

/** Reads an order: safe to run without asking anyone. */
export const lookupOrder = tool("lookupOrder", {
  description: "Look up an order by its id: the item, its delivery status and the total paid",
  args: Schema.Struct({ orderId: OrderId }),
  run: ({ orderId }) => {
    const order = orders.get(orderId)
    if (order === undefined) return `there is no order ${orderId}`
    return `${orderId}: ${order.item}, ${order.status}, ${order.total} EUR${refunded.has(orderId) ? ", refunded" : ""}`
  }
})

/** Refunds an order: `needsApproval: true` makes the run suspend before every call until a human decides. */
export const refundOrder = tool("refundOrder", {
  description: "Refund an order in full. A person approves every refund before it is made.",
  args: Schema.Struct({ orderId: OrderId, reason: Schema.String.annotate({ description: "why, in the customer's words" }) }),
  needsApproval: true,
  run: ({ orderId, reason }) => {
    const order = orders.get(orderId)
    if (order === undefined) return `there is no order ${orderId}`
    if (refunded.has(orderId)) return `${orderId} was already refunded`
    refunded.add(orderId)
    return `refunded ${order.total} EUR for ${orderId} (${reason})`
  }
})

/** The assistant on `model`: any ModelClient (a provider from `fromEnv()`, or a scripted one in tests). */
export const makeAssistant = (model: ModelClient, maxTurns = 6) =>
  agent("support")
    .prompt(
      "You are the support assistant of a small coffee shop. Use lookupOrder to answer questions about " +
        "orders and refundOrder when a customer asks for a refund. Answer in one or two sentences."
    )
    .model(model)
    .budget({ maxTurns })
    .tools({ lookupOrder, refundOrder })
