import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { ServerLive } from "./Server.js"

/** Start-up failures are reported on one line: a bad variable names itself and what it accepts. */
const describeStartupFailure = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure) && ConfigError.isConfigError(failure.value)) {
    return `invalid configuration: ${configMessages(failure.value).join("; ")}`
  }
  return `failed to start: ${Cause.pretty(cause, { renderErrorCause: false }).split("\n")[0]}`
}

const configMessages = (error: ConfigError.ConfigError): Array<string> => {
  switch (error._op) {
    case "And":
    case "Or":
      return [...configMessages(error.left), ...configMessages(error.right)]
    case "InvalidData":
      return [error.message]
    default:
      return [`${error.path.join("_")}: ${error.message}`]
  }
}

const main = Layer.launch(ServerLive).pipe(
  Effect.tapErrorCause((cause) =>
    Cause.isInterruptedOnly(cause)
      ? Effect.void
      : Effect.sync(() => process.stderr.write(`hangar: ${describeStartupFailure(cause)}\n`))
  )
)

NodeRuntime.runMain(main, { disableErrorReporting: true, disablePrettyLogger: true })
