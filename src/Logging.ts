import * as Cause from "effect/Cause"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as LogLevel from "effect/LogLevel"

/**
 * Structured logs: one JSON object per line, with the level, the time, the message and the log
 * annotations as top-level fields. A plain object among the message's parts is spread into the
 * line too: `Effect.logInfo("request", { status: 200 })` gives `{"msg":"request","status":200}`.
 * Callers never log secrets; causes are rendered without their nested `cause` chains (where a
 * driver error could carry statement parameters).
 */
export const jsonLineLogger = (write: (line: string) => void) =>
  Logger.make<unknown, void>(({ annotations, cause, date, logLevel, message }) => {
    const line: Record<string, unknown> = { level: logLevel.label.toLowerCase(), time: date.toISOString(), msg: "" }
    const text: Array<string> = []
    for (const part of Array.isArray(message) ? message : [message]) {
      if (typeof part === "string") text.push(part)
      else if (part !== null && typeof part === "object" && Object.getPrototypeOf(part) === Object.prototype) Object.assign(line, part)
      else text.push(JSON.stringify(part))
    }
    line.msg = text.join(" ")
    if (HashMap.size(annotations) > 0) for (const [key, value] of HashMap.toEntries(annotations)) line[key] = value
    if (!Cause.isEmpty(cause)) line.error = Cause.pretty(cause, { renderErrorCause: false })
    write(JSON.stringify(line))
  })

/**
 * Lines written to stdout in one write per turn of the event loop rather than one per line: a
 * write to a file or pipe is a synchronous system call, and under load one per request was a
 * sixth of the CPU. What is pending is written out when the process exits.
 */
const batchedStdout = () => {
  let pending: Array<string> = []
  let scheduled = false
  const flush = () => {
    scheduled = false
    if (pending.length === 0) return
    const chunk = pending.join("")
    pending = []
    process.stdout.write(chunk)
  }
  process.on("exit", flush)
  return (line: string) => {
    pending.push(line + "\n")
    if (!scheduled) {
      scheduled = true
      setImmediate(flush)
    }
  }
}

const stdoutLogger = jsonLineLogger(batchedStdout())

/** Replaces the default logger with JSON lines on stdout at the given minimum level. */
export const layer = (level: LogLevel.LogLevel): Layer.Layer<never> =>
  Layer.merge(Logger.replace(Logger.defaultLogger, stdoutLogger), Logger.minimumLogLevel(level))
