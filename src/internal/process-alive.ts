/**
 * Whether a process of this host is alive: `kill(pid, 0)` succeeds, or fails only for want of
 * permission (the process exists but belongs to another user).
 *
 * @example
 * ```ts
 * isProcessAlive(process.pid) // true
 * ```
 */
export const isProcessAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}
