/**
 * Signed snapshots: an HMAC-SHA256 over the snapshot's canonical JSON (the Schema's encoding, keys in
 * Schema order, without the signature), tagged with a key id so a snapshot signed with another secret
 * is told apart from one changed after signing. An agent that signs (`.signSnapshots(secret)`) refuses
 * unsigned, foreign and tampered snapshots with `SnapshotRejected` before anything runs.
 */
import * as Effect from "effect/Effect"
import { lazyPackage } from "../internal/lazy-package.ts"
import { encodeSnapshot, type RunSnapshot } from "../dsl/run-snapshot.ts"
import { SnapshotRejected } from "../errors.ts"

// node:crypto loads when a snapshot is first signed or verified, not with the package (cold start, #20).
const crypto = lazyPackage<typeof import("node:crypto")>("node:crypto")

const unsigned = (snapshot: RunSnapshot): RunSnapshot => {
  const { signature: _, ...rest } = snapshot
  return rest
}

const keyId = (secret: string): string => crypto().createHmac("sha256", secret).update("effect-agent-dsl/snapshot-key-id").digest("hex").slice(0, 16)

const mac = (secret: string, snapshot: RunSnapshot): string =>
  crypto().createHmac("sha256", secret).update(encodeSnapshot(unsigned(snapshot))).digest("hex")

/**
 * The snapshot with its signature: `v1.<key id>.<hmac>`.
 *
 * @example
 * ```ts
 * const signed = signSnapshot(snapshot, process.env.SNAPSHOT_SECRET!)
 * ```
 */
export const signSnapshot = (snapshot: RunSnapshot, secret: string): RunSnapshot => ({
  ...unsigned(snapshot),
  signature: `v1.${keyId(secret)}.${mac(secret, snapshot)}`
})

/** The snapshot when its signature is this secret's and matches its content; else `SnapshotRejected`. */
export const verifySnapshot = (snapshot: RunSnapshot, secret: string): Effect.Effect<RunSnapshot, SnapshotRejected> => {
  const reject = (reason: SnapshotRejected["reason"]) => Effect.fail(new SnapshotRejected({ agent: snapshot.agent, reason }))
  const signature = snapshot.signature
  if (signature === undefined) return reject("unsigned")
  const [version, id, digest] = signature.split(".")
  if (version !== "v1" || id === undefined || digest === undefined) return reject("tampered")
  if (id !== keyId(secret)) return reject("foreign")
  const expected = Buffer.from(mac(secret, snapshot), "hex")
  const found = Buffer.from(digest, "hex")
  return found.length === expected.length && crypto().timingSafeEqual(found, expected) ? Effect.succeed(snapshot) : reject("tampered")
}
