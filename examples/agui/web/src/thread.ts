// The agent of this page: the AG-UI endpoint it is served beside, reached directly as a
// CopilotKit self-managed agent (no CopilotKit runtime in between).
//
// The endpoint keeps each thread in its inbox (it survives a restart of the agent), and
// `POST connect` beside it shows a thread as it stands, running nothing: RUN_STARTED, the
// conversation and state snapshots, then RUN_FINISHED with the open interrupts (or
// success). That is AG-UI's `connect`, which CopilotKit's chat calls when it opens a
// thread, so a reload — or the same thread opened in another browser, by the same person
// or by an approver — restores the conversation and the pending card from the server.
// The page keeps nothing but the thread's id. An answer goes to the endpoint as a
// `resume`, and the endpoint alone decides whether it counts.

import {
  EventType,
  type AgentCapabilities,
  HttpAgent,
  randomUUID,
  runHttpRequest,
  transformHttpEventStream,
  type AgentSubscriber,
  type BaseEvent,
  type HttpAgentConfig,
  type Interrupt,
  type RunAgentInput,
  type RunErrorEvent,
} from "@ag-ui/client";
import { Observable, catchError, of, takeWhile, throwError } from "rxjs";

/**
 * Drops, from a resume, the tool result CopilotKit writes for a call whose interrupt it
 * answers (the answer itself, as text): the call has not run yet, and the endpoint sends
 * its real result once it has.
 */
function answeredCallsDropped(): AgentSubscriber {
  return {
    onRunInitialized: ({ messages, input, agent }) => {
      const answered = new Set((input.resume ?? []).map((entry) => entry.interruptId));
      const calls = new Set(
        agent.pendingInterrupts.filter((i) => answered.has(i.id) && i.toolCallId).map((i) => i.toolCallId),
      );
      if (calls.size === 0) return;
      return { messages: messages.filter((m) => !(m.role === "tool" && calls.has(m.toolCallId))) };
    },
  };
}

/** An HttpAgent whose `connect` is the endpoint's: the thread as the server keeps it. */
export class ShopAgent extends HttpAgent {
  constructor(config: HttpAgentConfig) {
    super(config);
    this.subscribe(answeredCallsDropped());
    this.subscribe({
      onRunFinishedEvent: (params) => {
        this.stated = params.outcome === "interrupt" ? params.interrupts : [];
      },
    });
  }

  /**
   * The interrupts the server last said are open on this thread, in this tab's memory
   * only: shown again when the server cannot be reached (an answer sent while the agent
   * is down fails, and the card must stay to be answered once it is back).
   */
  private stated: Interrupt[] = [];

  // The server states the open interrupts afresh; the client refuses to connect while it
  // still counts interrupts as pending (as after a refused answer), so they are dropped
  // first and come back with the connect's RUN_FINISHED.
  async connectAgent(...args: Parameters<HttpAgent["connectAgent"]>) {
    this.pendingInterrupts = [];
    this.connecting = true;
    try {
      return await super.connectAgent(...args);
    } finally {
      this.connecting = false;
    }
  }

  /** Whether the run under way is a connect (showing the thread), not a run of the agent. */
  connecting = false;

  /**
   * What the agent says it can do: the endpoint's `capabilities` beside the run URL,
   * asked with the same headers as a run (HttpAgent leaves this to the transport).
   */
  async getCapabilities(): Promise<AgentCapabilities> {
    const response = await this.fetch(this.beside("capabilities"), {
      headers: { ...this.headers, Accept: "application/json" },
    });
    if (!response.ok) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
    return (await response.json()) as AgentCapabilities;
  }

  /** The endpoint's URL for `name`, beside the run URL. */
  private beside(name: string): string {
    return new URL(name, this.url.endsWith("/") ? this.url : `${this.url}/`).href;
  }

  // Posted as a run is (the same headers: the bearer token), to `connect` beside it. A
  // thread the server does not know — a new one, or one that is not this caller's to see —
  // is refused as `unknown_thread`: nothing to show, the chat opens empty. When the server
  // cannot be reached at all, the interrupts it last stated stay open here, the
  // conversation already on the page staying as it is.
  protected connect(input: RunAgentInput): Observable<BaseEvent> {
    const url = this.beside("connect");
    const stated = this.stated;
    return transformHttpEventStream(runHttpRequest(() => this.fetch(url, this.requestInit(input)))).pipe(
      takeWhile(
        (event) => !(event.type === EventType.RUN_ERROR && (event as RunErrorEvent).code === "unknown_thread"),
      ),
      catchError((error: unknown) => {
        // fetch() rejects with a TypeError when nothing answers; an abort or an HTTP
        // refusal is no reason to show anything.
        if (!(error instanceof TypeError) || stated.length === 0) return throwError(() => error);
        const { threadId } = input;
        const runId = input.runId || randomUUID();
        return of(
          { type: EventType.RUN_STARTED, threadId, runId } as BaseEvent,
          {
            type: EventType.RUN_FINISHED,
            threadId,
            runId,
            outcome: { type: "interrupt", interrupts: stated },
          } as BaseEvent,
        );
      }),
    );
  }
}

const currentKey = "toolnexus-agui/current-thread";

/**
 * The thread this page shows: `?thread=ID` when the address names one, else the one
 * this browser last used, else a new one. The address then names it, so it can be
 * opened elsewhere (another browser, another device, an approver's).
 */
export function currentThread(): string {
  const named = new URLSearchParams(location.search).get("thread");
  const thread = named || localStorage.getItem(currentKey) || randomUUID();
  localStorage.setItem(currentKey, thread);
  if (!named) {
    const url = new URL(location.href);
    url.searchParams.set("thread", thread);
    history.replaceState(null, "", url.href);
  }
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
