/**
 * A separate process that resumes a bank run from the JSON snapshot on stdin alone, with the decision
 * named in argv[2] for every waiting call, and prints the result and the tools that ran as JSON.
 */
import { Effect } from "effect"
import { Decision, isAgentError, text } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { makeBank, secret } from "./bank.ts"

const chunks: Array<Buffer> = []
for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
const json = Buffer.concat(chunks).toString("utf8")
const parsed = JSON.parse(json) as { state: { awaiting?: Array<{ id: string }> } }
const decision = process.argv[2] === "deny" ? Decision.deny("not today") : Decision.approve
const decisions = Object.fromEntries((parsed.state.awaiting ?? []).map((a) => [a.id, decision]))
const { bank, executed } = makeBank(scriptedModel([text("all done")]), { sign: secret })
try {
  const result = await Effect.runPromise(bank.resume(json, decisions))
  process.stdout.write(JSON.stringify({ result, executed }))
} catch (error) {
  process.stdout.write(JSON.stringify({ error: isAgentError(error) ? { _tag: error._tag, message: error.message } : String(error) }))
}
