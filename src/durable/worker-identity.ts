/**
 * Who runs a mutating tool call: the owner named in its claim. An owner id is
 * `<host>|<pid namespace>|<pid>|<random>`, made once per process. From another process's id this
 * process can sometimes tell that its owner is dead (same host and pid namespace, and no such process,
 * or this very pid with another random part: a restart). Anything else (another host, another
 * container) is `unknown`, and only the claim's lease says whether the owner still works.
 */
import { randomUUID } from "node:crypto"
import { readlinkSync } from "node:fs"
import { hostname } from "node:os"
import { isProcessAlive } from "../internal/process-alive.ts"

const pidNamespace = (): string => {
  try {
    return readlinkSync("/proc/self/ns/pid")
  } catch {
    return ""
  }
}

const host = hostname()
const namespace = pidNamespace()

/** This process's owner id. */
export const workerId: string = `${host}|${namespace}|${process.pid}|${randomUUID()}`


/**
 * What this process knows of `owner`: `self` (this process), `dead` (a process of this host that is
 * gone, or an owner-less claim of an earlier version), or `unknown` (maybe alive: trust its lease).
 */
export const ownerState = (owner: string | undefined): "self" | "dead" | "unknown" => {
  if (owner === undefined || owner === "") return "dead"
  if (owner === workerId) return "self"
  const [ownerHost, ownerNamespace, pidText] = owner.split("|")
  const pid = Number(pidText)
  if (ownerHost !== host || ownerNamespace !== namespace || namespace === "" || !Number.isInteger(pid) || pid <= 0) return "unknown"
  // The same pid with another random part is an earlier process of that pid: this one replaced it.
  if (pid === process.pid) return "dead"
  return isProcessAlive(pid) ? "unknown" : "dead"
}
