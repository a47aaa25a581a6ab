import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as SchemaAST from "effect/SchemaAST"
import { RequestValidationError, ValidationErrorItem } from "../api/Errors.js"

/**
 * Turns Effect Schema parse issues into FastAPI/pydantic validation items, so that one client
 * parser serves every 422: `loc` starts with the request section, `type` and `msg` follow the
 * names pydantic uses, `input` is the offending value and `ctx` its constraint.
 */

export type Section = "path" | "query" | "header" | "body"

export const item = (
  loc: ReadonlyArray<string>,
  type: string,
  msg: string,
  input: unknown,
  ctx: Record<string, unknown> = {}
): ValidationErrorItem => new ValidationErrorItem({ loc, type, msg, input, ctx }, { disableValidation: true })

/** Problems found past the body's schema (rules across fields, or against stored state), as a 422. */
export const bodyValueErrors = (
  problems: ReadonlyArray<{ readonly field: string; readonly msg: string; readonly input: unknown }>
): RequestValidationError =>
  new RequestValidationError({
    detail: problems.map((problem) => item(["body", problem.field], "value_error", `Value error, ${problem.msg}`, problem.input))
  })

export const toItems = (section: Section, issue: ParseResult.ParseIssue, input: unknown): Array<ValidationErrorItem> => {
  const out: Array<ValidationErrorItem> = []
  walk(issue, [section], input, out)
  return out
}

const walk = (
  issue: ParseResult.ParseIssue,
  loc: ReadonlyArray<string>,
  parent: unknown,
  out: Array<ValidationErrorItem>,
  /** Inside an integer refinement: a number that fails to parse is an integer that fails to parse. */
  integer = false
): void => {
  switch (issue._tag) {
    case "Pointer": {
      const path = Array.isArray(issue.path) ? issue.path : [issue.path]
      walk(issue.issue, [...loc, ...path.map(String)], issue.actual, out, integer)
      return
    }
    case "Composite": {
      const issues: ReadonlyArray<ParseResult.ParseIssue> = Array.isArray(issue.issues)
        ? issue.issues
        : [issue.issues as ParseResult.ParseIssue]
      if (SchemaAST.isUnion(issue.ast)) {
        // `optional(X)` and `NullOr(X)` fail like X: report X's issue, not the union's.
        const relevant = issues.filter((inner) => !("ast" in inner && isNullish(inner.ast as SchemaAST.AST)))
        if (relevant.length === 1) {
          walk(relevant[0], loc, parent, out, integer)
        } else {
          out.push(unionItem(issue, loc))
        }
        return
      }
      for (const inner of issues) walk(inner, loc, issue.actual, out, integer)
      return
    }
    case "Refinement": {
      if (issue.kind === "From") {
        walk(issue.issue, loc, parent, out, integer || jsonSchemaOf(issue.ast).type === "integer")
      } else {
        // The refinement saw the decoded value (a number, not the query string it came from).
        const actual = issue.issue._tag === "Type" ? issue.issue.actual : issue.actual
        out.push(refinementItem(issue.ast, actual, loc, issue.issue))
      }
      return
    }
    case "Transformation": {
      if (issue.kind === "Transformation") {
        out.push(transformationItem(issue.ast, issue.actual, loc, integer))
      } else {
        walk(issue.issue, loc, parent, out, integer)
      }
      return
    }
    case "Missing":
      // pydantic reports the object the field is missing from as the input.
      out.push(item(loc, "missing", "Field required", parent ?? null))
      return
    case "Unexpected":
      out.push(item(loc, "extra_forbidden", "Extra inputs are not permitted", issue.actual))
      return
    case "Type":
      out.push(typeItem(issue.ast, issue.actual, loc, issue.message, integer))
      return
    case "Forbidden":
      out.push(item(loc, "value_error", issue.message ?? "Value error", issue.actual))
      return
  }
}

const typeItem = (
  ast: SchemaAST.AST,
  actual: unknown,
  loc: ReadonlyArray<string>,
  message: Option.Option<string> | string | undefined,
  integer = false
): ValidationErrorItem => {
  switch (ast._tag) {
    case "StringKeyword":
      return item(loc, "string_type", "Input should be a valid string", actual)
    case "NumberKeyword":
      return integer
        ? item(loc, "int_type", "Input should be a valid integer", actual)
        : item(loc, "float_type", "Input should be a valid number", actual)
    case "BooleanKeyword":
      return item(loc, "bool_type", "Input should be a valid boolean", actual)
    case "TypeLiteral":
      return item(loc, "dict_type", "Input should be a valid dictionary", actual)
    case "TupleType":
      return item(loc, "list_type", "Input should be a valid list", actual)
    case "Literal":
      return literalItem([ast.literal], actual, loc)
    case "Enums":
      return literalItem(ast.enums.map(([, value]) => value), actual, loc)
    case "Declaration": {
      const identifier = SchemaAST.getIdentifierAnnotation(ast)
      if (Option.isSome(identifier) && identifier.value.startsWith("DateTime")) {
        return item(loc, "datetime_type", "Input should be a valid datetime", actual)
      }
      return item(loc, "value_error", messageOf(message) ?? "Value error", actual)
    }
    case "Union":
      return unionItem({ ast, actual }, loc)
    default:
      return item(loc, "value_error", messageOf(message) ?? "Value error", actual)
  }
}

const messageOf = (message: Option.Option<string> | string | undefined): string | undefined =>
  message === undefined ? undefined : typeof message === "string" ? message : Option.getOrUndefined(message)

const formatLiteral = (value: SchemaAST.LiteralValue | string | number) =>
  typeof value === "string" ? `'${value}'` : String(value)

const literalItem = (
  literals: ReadonlyArray<SchemaAST.LiteralValue | string | number>,
  actual: unknown,
  loc: ReadonlyArray<string>
): ValidationErrorItem => {
  const formatted = literals.map(formatLiteral)
  const expected = formatted.length <= 1
    ? formatted.join("")
    : `${formatted.slice(0, -1).join(", ")} or ${formatted[formatted.length - 1]}`
  const type = literals.length > 1 ? "enum" : "literal_error"
  return item(loc, type, `Input should be ${expected}`, actual, { expected })
}

const isNullish = (ast: SchemaAST.AST) =>
  ast._tag === "UndefinedKeyword" || (SchemaAST.isLiteral(ast) && ast.literal === null)

/** A union failed: an enum of literals, an optional/nullable value, or a genuine alternative. */
const unionItem = (
  issue: { readonly ast: SchemaAST.AST; readonly actual: unknown },
  loc: ReadonlyArray<string>
): ValidationErrorItem => {
  const union = issue.ast as SchemaAST.Union
  const members = union.types.filter((member) => !isNullish(member))
  if (members.length > 0 && members.every(SchemaAST.isLiteral)) {
    return literalItem(members.map((member) => member.literal), issue.actual, loc)
  }
  if (members.length === 1) {
    return typeItem(members[0], issue.actual, loc, undefined)
  }
  return item(loc, "union_type", "Input does not match any allowed type", issue.actual)
}

const jsonSchemaOf = (ast: SchemaAST.AST): Record<string, unknown> => {
  const annotation = SchemaAST.getJSONSchemaAnnotation(ast)
  return Option.isSome(annotation) ? annotation.value as Record<string, unknown> : {}
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

const refinementItem = (
  ast: SchemaAST.Refinement,
  actual: unknown,
  loc: ReadonlyArray<string>,
  inner: ParseResult.ParseIssue
): ValidationErrorItem => {
  const js = jsonSchemaOf(ast)
  const custom = SchemaAST.getMessageAnnotation(ast)
  if (typeof js.maxLength === "number") {
    return item(loc, "string_too_long", `String should have at most ${plural(js.maxLength, "character")}`, actual, {
      max_length: js.maxLength
    })
  }
  if (typeof js.minLength === "number") {
    return item(loc, "string_too_short", `String should have at least ${plural(js.minLength, "character")}`, actual, {
      min_length: js.minLength
    })
  }
  if (typeof js.pattern === "string") {
    return item(loc, "string_pattern_mismatch", `String should match pattern '${js.pattern}'`, actual, {
      pattern: js.pattern
    })
  }
  if (typeof js.maxItems === "number") {
    return item(loc, "too_long", `List should have at most ${plural(js.maxItems, "item")}`, actual, {
      max_length: js.maxItems
    })
  }
  if (typeof js.minItems === "number") {
    return item(loc, "too_short", `List should have at least ${plural(js.minItems, "item")}`, actual, {
      min_length: js.minItems
    })
  }
  if (js.type === "integer") {
    return item(loc, "int_from_float", "Input should be a valid integer, got a number with a fractional part", actual)
  }
  if (typeof actual === "number") {
    const bound = numericBound(js, actual)
    if (bound) return item(loc, bound.type, bound.msg, actual, bound.ctx)
  }
  const message = Option.isSome(custom) ? customMessage(inner) : undefined
  return item(loc, "value_error", `Value error, ${message ?? "invalid value"}`, actual)
}

const numericBound = (js: Record<string, unknown>, actual: number) => {
  if (typeof js.minimum === "number" && actual < js.minimum) {
    return { type: "greater_than_equal", msg: `Input should be greater than or equal to ${js.minimum}`, ctx: { ge: js.minimum } }
  }
  if (typeof js.maximum === "number" && actual > js.maximum) {
    return { type: "less_than_equal", msg: `Input should be less than or equal to ${js.maximum}`, ctx: { le: js.maximum } }
  }
  if (typeof js.exclusiveMinimum === "number" && actual <= js.exclusiveMinimum) {
    return { type: "greater_than", msg: `Input should be greater than ${js.exclusiveMinimum}`, ctx: { gt: js.exclusiveMinimum } }
  }
  if (typeof js.exclusiveMaximum === "number" && actual >= js.exclusiveMaximum) {
    return { type: "less_than", msg: `Input should be less than ${js.exclusiveMaximum}`, ctx: { lt: js.exclusiveMaximum } }
  }
  return undefined
}

const customMessage = (issue: ParseResult.ParseIssue): string | undefined => {
  const formatted = ParseResult.ArrayFormatter.formatIssueSync(issue)
  return formatted[0]?.message
}

/** A transformation rejected its input: a number, a date-time or JSON that did not parse. */
const transformationItem = (
  ast: SchemaAST.Transformation,
  actual: unknown,
  loc: ReadonlyArray<string>,
  integer: boolean
): ValidationErrorItem => {
  const target = SchemaAST.typeAST(ast.to)
  const identifier = Option.getOrUndefined(SchemaAST.getIdentifierAnnotation(ast))
  if (integer) {
    return item(loc, "int_parsing", "Input should be a valid integer, unable to parse string as an integer", actual)
  }
  if (target._tag === "NumberKeyword" || identifier === "NumberFromString") {
    return item(loc, "float_parsing", "Input should be a valid number, unable to parse string as a number", actual)
  }
  if (identifier?.startsWith("DateTime") || identifier === "DateFromString") {
    return item(loc, "datetime_from_date_parsing", "Input should be a valid datetime", actual)
  }
  if (identifier === "parseJson") {
    return item(loc, "json_invalid", "Invalid JSON", actual)
  }
  if (target._tag === "BooleanKeyword") {
    return item(loc, "bool_parsing", "Input should be a valid boolean, unable to interpret input", actual)
  }
  return item(loc, "value_error", "Value error, invalid value", actual)
}
