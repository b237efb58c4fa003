// The agent of this page: the AG-UI endpoint it is served beside, reached directly as a
// CopilotKit self-managed agent (no CopilotKit runtime in between), and what a reload
// needs to show the thread again.
//
// The endpoint ends a run that waits for a person with MESSAGES_SNAPSHOT, STATE_SNAPSHOT
// and a RUN_FINISHED listing the interrupts, and keeps the thread in its inbox (it
// survives a restart of the agent). It has no call that replays a thread, so the page
// keeps what the last finished run left — the conversation and the open interrupts — in
// the browser, and replays it as the events of AG-UI's `connect`, which CopilotKit's
// chat calls when it opens a thread. The answer then goes to the endpoint as a `resume`,
// and the endpoint alone decides whether it counts.

import {
  AGUIConnectNotImplementedError,
  EventType,
  HttpAgent,
  randomUUID,
  type AgentSubscriber,
  type BaseEvent,
  type HttpAgentConfig,
  type Interrupt,
  type Message,
  type RunAgentInput,
} from "@ag-ui/client";
import { Observable } from "rxjs";

/** What the last finished run of a thread left: its conversation and open interrupts. */
interface Kept {
  messages: Message[];
  interrupts: Interrupt[];
}

const keptKey = (thread: string) => `toolnexus-agui/thread/${thread}`;

function load(thread: string): Kept | null {
  const raw = localStorage.getItem(keptKey(thread));
  if (!raw) return null;
  try {
    const kept = JSON.parse(raw) as Partial<Kept>;
    if (!Array.isArray(kept.messages) || !Array.isArray(kept.interrupts)) return null;
    return { messages: kept.messages, interrupts: kept.interrupts };
  } catch {
    // Storage another version of the page wrote: start from the server's next answer.
    return null;
  }
}

function keep(thread: string, kept: Kept) {
  localStorage.setItem(keptKey(thread), JSON.stringify(kept));
}

/**
 * Records each finished run. A run that ends in RUN_ERROR (a refused resume, a busy
 * thread) changes nothing on the server, so it changes nothing here either.
 *
 * It also drops, from a resume, the tool result CopilotKit writes for a call whose
 * interrupt it answers (the answer itself, as text): the call has not run yet, and the
 * endpoint sends its real result once it has.
 */
function keeper(): AgentSubscriber {
  let finished: Interrupt[] | null = null;
  return {
    onRunInitialized: ({ messages, input, agent }) => {
      finished = null;
      const answered = new Set((input.resume ?? []).map((entry) => entry.interruptId));
      const calls = new Set(
        agent.pendingInterrupts.filter((i) => answered.has(i.id) && i.toolCallId).map((i) => i.toolCallId),
      );
      if (calls.size === 0) return;
      return { messages: messages.filter((m) => !(m.role === "tool" && calls.has(m.toolCallId))) };
    },
    onRunFinishedEvent: (params) => {
      finished = params.outcome === "interrupt" ? params.interrupts : [];
    },
    onRunFinalized: ({ messages, agent }) => {
      if (finished) keep(agent.threadId, { messages: [...messages], interrupts: finished });
      finished = null;
    },
    onRunFailed: () => {
      finished = null;
    },
  };
}

/** An HttpAgent whose `connect` replays what the thread's last finished run left. */
export class ShopAgent extends HttpAgent {
  constructor(config: HttpAgentConfig) {
    super(config);
    this.subscribe(keeper());
  }

  // A replay states the open interrupts afresh; the client refuses to start one while it
  // still counts interrupts as pending (as after a refused answer), so they are dropped
  // first and come back with the replay's RUN_FINISHED.
  async connectAgent(...args: Parameters<HttpAgent["connectAgent"]>) {
    this.pendingInterrupts = [];
    this.replaying = true;
    try {
      return await super.connectAgent(...args);
    } finally {
      this.replaying = false;
    }
  }

  /** Whether the run under way is a replay of the kept thread, not a call to the agent. */
  replaying = false;

  protected connect(input: RunAgentInput): Observable<BaseEvent> {
    const kept = load(input.threadId);
    // Nothing kept: a new thread. The client reads this error as "nothing to replay".
    if (!kept) throw new AGUIConnectNotImplementedError();
    const { threadId } = input;
    const runId = input.runId || randomUUID();
    const events: BaseEvent[] = [
      { type: EventType.RUN_STARTED, threadId, runId } as BaseEvent,
      { type: EventType.MESSAGES_SNAPSHOT, messages: kept.messages } as BaseEvent,
      { type: EventType.STATE_SNAPSHOT, snapshot: { interrupts: kept.interrupts } } as BaseEvent,
      {
        type: EventType.RUN_FINISHED,
        threadId,
        runId,
        outcome:
          kept.interrupts.length > 0
            ? { type: "interrupt", interrupts: kept.interrupts }
            : { type: "success" },
      } as BaseEvent,
    ];
    return new Observable<BaseEvent>((subscriber) => {
      for (const event of events) subscriber.next(event);
      subscriber.complete();
    });
  }
}

const currentKey = "toolnexus-agui/current-thread";

/**
 * The thread this page shows: `?thread=ID` when the address names one, else the one
 * this browser last used, else a new one.
 */
export function currentThread(): string {
  const named = new URLSearchParams(location.search).get("thread");
  const thread = named || localStorage.getItem(currentKey) || randomUUID();
  localStorage.setItem(currentKey, thread);
  return thread;
}

/** Starts a new conversation: a new thread id, and the page shown afresh. */
export function newThread() {
  localStorage.setItem(currentKey, randomUUID());
  const url = new URL(location.href);
  url.searchParams.delete("thread");
  location.assign(url.href);
}

const tokenKey = "toolnexus-agui/token";

/**
 * The bearer token this tab calls the agent with, when the agent wants one: given once
 * as `#token=…` (a fragment never reaches a server's logs), then kept for the tab.
 */
export function bearerToken(): string | null {
  const given = new URLSearchParams(location.hash.slice(1)).get("token");
  if (given) {
    sessionStorage.setItem(tokenKey, given);
    history.replaceState(null, "", location.pathname + location.search);
  }
  return sessionStorage.getItem(tokenKey);
}
