/**
 * Effect-native user code: a tool, a hook and a knowledge loader that require services, a tool
 * implemented by a Layer, and the model provided as a Layer, all on scripted models (no network, no
 * key). The agent is built once; production and test Layers are swapped around it.
 * Run: npm run example:effect
 */
import * as NodeFileSystem from "@effect/platform-node-shared/NodeFileSystem"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Context, Effect, Layer, Ref, Schema } from "effect"
import { agent, fileKnowledge, ModelClient, skill, text, tool, toolCalls, toolLayer } from "effect-agent-dsl"
import { scriptedModel } from "effect-agent-dsl/testing"

// A service of the application: where orders live.
class Orders extends Context.Service<Orders, { readonly status: (id: string) => Effect.Effect<string> }>()("app/Orders") {}
// Another: an audit log the hooks write to.
class AuditLog extends Context.Service<AuditLog, Ref.Ref<ReadonlyArray<string>>>()("app/AuditLog") {}

// A tool whose run requires Orders: the agent's type records it.
const orderStatus = tool("order_status", {
  description: "The shipping status of an order",
  args: Schema.Struct({ id: Schema.String.annotate({ description: "the order id" }) }),
  run: ({ id }) => Effect.flatMap(Effect.service(Orders), (orders) => orders.status(id))
})

// A tool declared without run: implemented by a Layer, swapped in tests.
const refund = tool("refund", {
  description: "Refund an order",
  args: Schema.Struct({ id: Schema.String }),
  success: Schema.String
})

const main = Effect.gen(function*() {
  // A policy file for the knowledge source, in a temporary directory removed when the program ends.
  const dir = yield* Effect.acquireRelease(
    Effect.promise(() => mkdtemp(join(tmpdir(), "effect-services-"))),
    (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )
  const policy = join(dir, "refunds.md")
  yield* Effect.promise(() => writeFile(policy, "Refunds are possible within 30 days."))

  // Built once. Its runEffect requires ModelClientService | Orders | AuditLog | FileSystem |
  // ToolImplementation<"refund">; `.run` would not compile until they are provided.
  const support = agent("support")
    .prompt("Answer customers about their orders.")
    .tools({ [orderStatus.name]: orderStatus, refund })
    .skills(({ order_status, refund }) => [
      skill("orders", "Order questions").tools(order_status, refund).knowledge("refund_policy", "The refund policy", fileKnowledge(policy))
    ])
    .onToolUse((event) => Effect.flatMap(Effect.service(AuditLog), (log) => Ref.update(log, (lines) => [...lines, `${event.tool} ${JSON.stringify(event.args)}`])))

  // The model, as a Layer (in production: openaiLayerConfig(), fromEnvLayer, ...).
  const model = ModelClient.layer(scriptedModel([
    toolCalls([{ id: "1", name: "order_status", arguments: { id: "A-7" } }]),
    toolCalls([{ id: "2", name: "refund_policy", arguments: {} }]),
    toolCalls([{ id: "3", name: "refund", arguments: { id: "A-7" } }]),
    text("Order A-7 is delayed; it is within the 30-day window, so I refunded it.")
  ]))
  const audit = yield* Ref.make<ReadonlyArray<string>>([])
  const services = Layer.mergeAll(
    model,
    Layer.succeed(Orders, { status: (id) => Effect.succeed(`${id}: delayed in transit`) }),
    Layer.succeed(AuditLog, audit),
    NodeFileSystem.layer,
    toolLayer(refund, ({ id }) => `refund of ${id} issued`)
  )

  // With .provide(layer) the agent's requirements are met, and .run (a Promise) is available.
  const answer = yield* Effect.promise(() => support.provide(services).run("Where is my order A-7? I want a refund."))
  console.log("answer:", answer)
  console.log("audit:", yield* Ref.get(audit))

  // In a test, swap one implementation; the agent is not rebuilt.
  const dryRun = toolLayer(refund, ({ id }) => `dry run: would refund ${id}`)
  const tested = yield* support.runEffect("Refund A-7").pipe(
    Effect.provide(Layer.mergeAll(
      ModelClient.layer(scriptedModel([toolCalls([{ id: "1", name: "refund", arguments: { id: "A-7" } }]), text("done")])),
      Layer.succeed(Orders, { status: () => Effect.succeed("unused") }),
      Layer.succeed(AuditLog, yield* Ref.make<ReadonlyArray<string>>([])),
      NodeFileSystem.layer,
      dryRun
    ))
  )
  console.log("test run:", tested)
})

Effect.runPromise(Effect.scoped(main)).catch((error) => {
  console.error(error)
  process.exitCode = 1
})
