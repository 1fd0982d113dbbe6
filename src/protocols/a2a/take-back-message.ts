/**
 * Taking a message back out of a task's history. The SDK's `DefaultRequestHandler` appends a message
 * on an existing task to the task's history and saves it before it calls the executor
 * (`_createRequestContext` in `@a2a-js/sdk/dist/server/index.js`), so a message the executor then
 * refuses would stay there. The executor cannot undo it on the event bus: only a `task` event replaces
 * a history, and a second `task` event ends a running task's stream with a stream-ordering error. It
 * undoes it in the task store instead, under the lock the SDK's own writes of the task take (the
 * `ResultManager`'s), so a status the running execution publishes at the same moment is neither lost
 * nor undone.
 */
import type { Task } from "@a2a-js/sdk"
import { AgentEvent, ResultManager, type ServerCallContext, type TaskStore } from "@a2a-js/sdk/server"

/**
 * Removes message `messageId` from task `taskId`'s history in `store`. The SDK keeps its per-task write
 * lock to itself; a `ResultManager` takes it to handle a `task` event, loading the task once and
 * saving it once. Handed a store whose `save` writes what was loaded, without the message, it makes
 * that one write under the lock.
 *
 * @example
 * ```ts
 * await takeBackMessage(store, context.context, context.taskId, context.userMessage.messageId)
 * ```
 */
export const takeBackMessage = async (store: TaskStore, context: ServerCallContext, taskId: string, messageId: string): Promise<void> => {
  let loaded: Task | undefined
  const without: TaskStore = {
    load: async (id, call) => (loaded = await store.load(id, call)),
    save: async (_merged, call) => {
      if (loaded === undefined || !loaded.history.some((message) => message.messageId === messageId)) return
      await store.save({ ...loaded, history: loaded.history.filter((message) => message.messageId !== messageId) }, call)
    },
    list: (params, call) => store.list(params, call)
  }
  const event = AgentEvent.task({ id: taskId, contextId: "", status: undefined, artifacts: [], history: [], metadata: undefined })
  await new ResultManager(without, context).processEvent(event)
}
