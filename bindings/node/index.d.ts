// TypeScript declarations of the agenttools Node binding (index.js).
// The AGT_* constants and the enum objects come from lib/constants.d.ts,
// generated from the C headers by bindings/tools/gen_decls.py.

export * from './lib/constants';
import { AgentEvent, ChangesMode, Decision, Draft, MaxTokensField, Mode, Phase, Protocol, RuleKind } from './lib/constants';

/** A JSON document: a value, or its text (a string is passed through as JSON text). */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** An enum argument: the member's value or its name in any case ("yolo", "approve-session"). */
export type EnumArg<T extends number> = T | string;

/** A failed libagenttools call: code is the AGT_E* status, message the library's. */
export class AgtError extends Error {
  constructor(message: string, code?: number);
  readonly code: number;
  static readonly CODE: number;
}
export class GenericError extends AgtError {}
export class NoMemoryError extends AgtError {}
export class InvalidArgumentError extends AgtError {}
export class ValidationError extends AgtError {}
export class NotFoundError extends AgtError {}
export class ExistsError extends AgtError {}
/** AGT_EPENDING: the call waits for approval. */
export class PendingError extends AgtError {
  callId: string;
}
export class FrozenError extends AgtError {}
export class ParseError extends AgtError {}
export class AgtIOError extends AgtError {}
export class DeniedError extends AgtError {}
export class TimeoutError extends AgtError {}
export class CancelledError extends AgtError {}
export class UnsupportedError extends AgtError {}
export class LimitError extends AgtError {}
export class GitError extends AgtError {}
export class NetError extends AgtError {}
export class AmbiguousError extends AgtError {}
export class StateError extends AgtError {}
/** The AgtError subclass of a status code (message: agt_error_message() when omitted). */
export function errorFor(code: number, message?: string): AgtError;

/** The library version ("1.0.0"). */
export function version(): string;
/** What this kernel offers the sandbox (see sandbox.h). */
export function sandboxProbe(): {
  supported: boolean; landlock_abi: number; seccomp: boolean; user_namespace: boolean;
  mount_namespace: boolean; pid_namespace: boolean; network_namespace: boolean; subreaper: boolean;
  root: boolean;
};
export function sandboxModeName(mode: number): string | null;
export function sandboxModeParse(name: string): number;

/** The path of the loaded libagenttools.so.1. */
export const libraryPath: string;
/** Declared functions the loaded library does not export (an older library). */
export const missing: string[];

declare class Handle {
  /** Makes the object unusable; the C object is freed once nothing depends on it. */
  close(): void;
  readonly closed: boolean;
}

/** A tool result, copied out of the library. */
export class Result {
  private constructor();
  readonly text: string;
  readonly isError: boolean;
  /** AGT_OK or the AGT_E* status of the call. */
  readonly status: number;
  /** The structured result, when the tool gives one. */
  readonly json: Json | null;
  readonly callId: string;
  readonly tool: string;
  /** The exception a JS provider threw for this call. */
  exception: unknown;
}

/** A tool call handed to a JS provider; valid only during the call. */
export class Call {
  private constructor();
  readonly id: string;
  readonly tool: string;
  readonly args: any;
  answered: boolean;
  setText(text: string): void;
  setError(text: string): void;
  setJson(value: Json): void;
}

/** A call seen by a pre- or post-tool-use hook; valid only during the hook. */
export class Hook {
  private constructor();
  readonly tool: string;
  readonly callId: string;
  readonly args: any;
  /** The result text (post hooks). */
  readonly resultText: string | null;
  readonly resultIsError: boolean;
  deny(reason?: string): void;
  rewrite(args: Json): void;
  append(text: string): void;
}

/** What a provider returns: result text, a JSON result, or nothing (the provider used call.setText). */
export type ProviderResult = string | object | undefined | null | void;

/** A tool catalogue. new Registry("chat") loads built-in sets at once. */
export class Registry extends Handle {
  constructor(...builtinSets: string[]);
  loadBuiltin(set: string): void;
  loadJson(tools: Json): void;
  add(entry: Json): void;
  /** fn(call): a thrown exception makes the call an error result (Result.exception). null removes it. */
  setProvider(name: string, fn: ((call: Call) => ProviderResult) | null): void;
  remove(name: string): void;
  setDescription(name: string, description: string): void;
  freeze(): void;
  readonly frozen: boolean;
  names(): string[];
  readonly length: number;
  isOffered(name: string, phase?: EnumArg<Phase>): boolean;
  /** The tool's access class (Access.*). */
  access(name: string): number;
  export(format?: 'native' | 'openai' | 'anthropic' | 'mcp' | string, phase?: EnumArg<Phase>): any;
}

/** An approval request (the agt_session_pending() item shape). */
export interface ApprovalRequest {
  call_id: string;
  tool: string;
  arguments: any;
  reason?: string;
  suggested_rule?: string;
  agent_id?: string;
  [key: string]: unknown;
}

/** An approver's answer. */
export type ApproverAnswer =
  | EnumArg<Decision>
  | [EnumArg<Decision>, string?, string?]
  | { decision: EnumArg<Decision>; reason?: string; rule?: string };

/** A session over a registry and a workspace root. */
export class Session extends Handle {
  constructor(registry: Registry, root: string);
  readonly registry: Registry;
  readonly root: string;
  mode: Mode | EnumArg<Mode>;
  phase: Phase | EnumArg<Phase>;
  setEditOptions(flags: number): void;
  todos(): Array<{ title: string; status: string }>;
  /** Runs a tool call; throws PendingError (with .callId) when it waits for approval. */
  dispatch(tool: string, args?: Json, callId?: string): Result;
  /** dispatch() on a worker thread; callbacks are delivered on the JS thread meanwhile. */
  dispatchAsync(tool: string, args?: Json, callId?: string): Promise<Result>;
  pending(): ApprovalRequest[];
  answer(callId: string, decision: EnumArg<Decision>, reason?: string): Result;
  answerAsync(callId: string, decision: EnumArg<Decision>, reason?: string): Promise<Result>;
  answerRule(callId: string, rule: string, reason?: string): Result;
  addRule(kind: EnumArg<RuleKind>, rule: string): void;
  allow(rule: string): void;
  ask(rule: string): void;
  deny(rule: string): void;
  loadRules(rules: Json): void;
  rules(): { allow: string[]; ask: string[]; deny: string[]; [key: string]: unknown };
  /** An exception rejects the call and is re-thrown once the dispatch returns. null clears. */
  setApprover(fn: ((request: ApprovalRequest) => ApproverAnswer) | null): void;
  setPreHook(fn: ((hook: Hook) => void) | null): void;
  setPostHook(fn: ((hook: Hook) => void) | null): void;
  setHookBudget(ms: number): void;
  /** fn() -> milliseconds since the epoch; null restores the real clock. */
  setClock(fn: (() => number) | null): void;
  setRelocator(fn: ((path: string, fileDiff: string, snippet: string, suggestion: string | null) => string | null) | null, maxAttempts?: number): void;
  setPlanFile(path: string): void;
  readonly planFile: string | null;
  save(): any;
  restore(state: Json): void;
  setIdle(idle: boolean): void;
  tick(nowMs?: number): any;
  cronList(): Array<{ id: string; cron: string; prompt: string; recurring: boolean; paused: boolean;
    created: number; last_fire: number | null; next_fire: number | null }>;
  cronDelete(id: string): void;
  cronSetPaused(id: string, paused?: boolean): void;
  pollFds(): number[];
  nextDeadline(nowMs?: number): number | null;
  setTaskLogDir(path: string): void;
  setMaxTasks(n: number): void;
  addSensitivePattern(pattern: string): void;
  removeSensitivePattern(pattern: string): void;
  sensitivePatterns(): string[];
  checkSensitive(path: string, content?: string | Uint8Array): string | null;
  setFetchPrivate(on: boolean): void;
  setBackgroundOnTimeout(on: boolean): void;
  setSandbox(mode: number | string, network?: number, enforce?: number): void;
  /** [mode, network, enforce] in force. */
  sandbox(): [number, number, number];
  addWritableRoot(path: string): void;
  setSandboxAutoAllow(on: boolean): void;
  sandboxStatus(): any;
  openReview(repoPath?: string | null, mode?: EnumArg<ChangesMode>, fromRev?: string | null, toRev?: string | null): void;
  setChanges(changes: Changes | null): void;
  setReviewFile(path: string): void;
  readonly reviewFile: string | null;
  setTurnThinking(text: string): void;
  readonly reviewDone: boolean;
  readonly reviewState: string | null;
  /** The review comments, anchored (path, start_line, end_line, side, content, ...). */
  comments(): ReviewComment[];
  clearComments(): void;
}

export interface ReviewComment {
  path: string;
  start_line: number;
  end_line: number;
  side: string;
  content: string;
  [key: string]: unknown;
}

export interface SchemaOptions {
  draft?: EnumArg<Draft>;
  formatAssertion?: boolean;
  resources?: { [uri: string]: Json };
  resolver?: (uri: string) => Json | null | undefined;
}

/** A compiled JSON Schema. */
export class Schema extends Handle {
  constructor(schema: Json, options?: SchemaOptions);
  /** [] when valid, else the violations. */
  validate(instance: Json): Array<{ instance_path: string; keyword: string; message: string; [key: string]: unknown }>;
  isValid(instance: Json): boolean;
}

export interface DiffFile {
  path: string;
  oldPath: string | null;
  newPath: string | null;
  status: number;
  binary: boolean;
}

/** A parsed unified diff (new Diff(text)) or a repository's (Diff.fromRepo()). */
export class Diff extends Handle {
  constructor(text: string);
  static fromRepo(repoPath: string, mode?: EnumArg<ChangesMode>, fromRev?: string | null, toRev?: string | null): Diff;
  toJson(): any;
  files(): DiffFile[];
  readonly length: number;
  fileIndex(path: string): number;
  fileText(path: string): string | null;
  setContent(path: string, text: string): void;
  content(path: string): string;
  anchor(path: string, snippet: string): any;
  anchorBatch(comments: Json): any;
  setRelocator(fn: ((path: string, fileDiff: string, snippet: string, suggestion: string | null) => string | null) | null, maxAttempts?: number): void;
}

/** A git change set. */
export class Changes extends Handle {
  constructor(repoPath: string, mode?: EnumArg<ChangesMode>, fromRev?: string | null, toRev?: string | null);
  /** The change set's diff, borrowed: its C object lives as long as this one. */
  readonly diff: Diff;
  info(): any;
  listFiles(): any;
  readFile(path: string): string | null;
}

/** A parsed 5-field cron expression. */
export class Cron extends Handle {
  constructor(expr: string);
  next(afterUnixS: number, tz?: string): number;
  describe(): string;
  readonly expression: string;
}

/** A canonical model response. */
export interface ModelResponse {
  content?: string;
  finish_reason?: string;
  tool_calls?: Array<{ id: string; name: string; arguments: string }>;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  [key: string]: unknown;
}

export interface ModelOptions {
  baseUrl?: string;
  apiKey?: string;
  name?: string;
}

/** A model client: HTTP (new Model(protocol, opts)), Model.replay(path) or Model.host(fn). */
export class Model extends Handle {
  constructor(protocol?: EnumArg<Protocol>, options?: ModelOptions);
  static replay(path: string): Model;
  /** fn(request) -> canonical response (object or JSON text); an exception fails the request and is re-thrown. */
  static host(fn: (request: any) => ModelResponse | string): Model;
  setBaseUrl(url: string): void;
  setApiKey(key: string): void;
  setName(name: string): void;
  setTimeouts(connectMs: number, totalMs: number, lowSpeedMs: number): void;
  setRetries(retries: number, backoffMs: number, backoffMaxMs: number): void;
  setMaxTokens(tokens: number, field?: EnumArg<MaxTokensField>): void;
  setExtraBody(body: Json): void;
  setExtraHeaders(headers: { [name: string]: string } | string | null): void;
  setStream(on: boolean): void;
  setStreamCallback(fn: ((kind: number, text: string) => unknown) | null): void;
  setCancelCallback(fn: (() => unknown) | null): void;
  /** Asks the running request to stop (also while completeAsync() is pending). */
  cancel(): void;
  readonly httpStatus: number;
  readonly attempts: number;
  complete(messages: Json, tools?: Json): ModelResponse;
  completeAsync(messages: Json, tools?: Json): Promise<ModelResponse>;
  static parseResponse(text: string): ModelResponse;
}

/** The agent loop over a Session and a Model (both kept alive by the agent). */
export class Agent extends Handle {
  constructor(session: Session, model: Model, systemPrompt?: string);
  readonly session: Session;
  readonly model: Model;
  setSystemPrompt(text: string): void;
  addUserMessage(text: string): void;
  /** data: a string for AgentEvent.TEXT and THINKING, an object otherwise; truthy return cancels. */
  setEventCallback(fn: ((kind: AgentEvent, data: any) => unknown) | null): void;
  setMaxTurns(n: number): void;
  setTokenBudget(tokens: number): void;
  setContextWindow(tokens: number, percent?: number): void;
  enableSubagents(): void;
  addSubagentProfile(name: string, description: string, tools?: string[] | null, systemPromptAddition?: string | null): void;
  setSwarmConcurrency(max: number): void;
  setParallelTools(max: number): void;
  setSubagentTimeout(ms: number): void;
  setSubagentApprover(fn: ((agentId: string, request: ApprovalRequest) => ApproverAnswer) | null): void;
  /** Runs until the loop stops; returns the stop reason (AgentEvent.STOP_*). */
  run(): number;
  resume(): number;
  /** run() on a worker thread; callbacks are delivered on the JS thread meanwhile. */
  runAsync(): Promise<number>;
  resumeAsync(): Promise<number>;
  answer(callId: string, decision: EnumArg<Decision>, reason?: string): void;
  /** Asks a running loop to stop (also while runAsync() is pending). */
  cancel(): void;
  readonly stopReason: number;
  readonly turns: number;
  readonly tokensUsed: number;
  readonly text: string | null;
  messages(): any[];
  save(): any;
  restore(state: Json): void;
}
