import { StrictMode, useCallback, useEffect, useState } from "react";
import { createRoot } from "react-dom/client";
import {
  CopilotChat,
  CopilotKitProvider,
  useAgent,
  useInterrupt,
  useRenderTool,
} from "@copilotkit/react-core/v2";
import { z } from "zod";
import "@copilotkit/react-core/v2/styles.css";
import "./style.css";

import { ApprovalCard } from "./ApprovalCard";
import { ShopAgent, bearerToken, currentThread, newThread } from "./thread";

const AGENT_ID = "shop";
const threadId = currentThread();
const token = bearerToken();
// The endpoint is the address the page is served from: the agent serves both.
const headers = token ? { Authorization: `Bearer ${token}` } : undefined;
const agent = new ShopAgent({ url: new URL("./", location.href).href, threadId, agentId: AGENT_ID, headers });

/**
 * Whether the agent takes an approval with edited arguments: unless its capabilities say
 * it does not (`humanInTheLoop.approveWithEdits: false`). Offered while they are unknown
 * or cannot be read, since the agent judges every edit it is sent anyway.
 */
function useApproveWithEdits(): boolean {
  const [edits, setEdits] = useState(true);
  useEffect(() => {
    let current = true;
    agent
      .getCapabilities()
      .then((said) => current && setEdits(said.humanInTheLoop?.approveWithEdits !== false))
      .catch(() => undefined);
    return () => {
      current = false;
    };
  }, []);
  return edits;
}

/** Renders each waiting purchase as a card in the chat. */
function Approvals() {
  const edits = useApproveWithEdits();
  useInterrupt({
    agentId: AGENT_ID,
    render: ({ interrupt, resolve }) =>
      interrupt ? (
        <ApprovalCard key={interrupt.id} interrupt={interrupt} resolve={resolve} edits={edits} />
      ) : (
        <></>
      ),
  });
  return null;
}

/** Shows each purchase the model asked for, and once it ran, what the shop answered. */
function Purchases() {
  useRenderTool(
    {
      name: "purchase",
      agentId: AGENT_ID,
      parameters: z.object({ item: z.string() }),
      render: ({ status, parameters, result }) => (
        <div className="tool-call" data-status={status}>
          <span className="tool-name">purchase</span> {parameters?.item}
          {status === "complete" ? (
            <span className="tool-result"> → {result}</span>
          ) : (
            <span className="tool-waiting"> · waiting for approval</span>
          )}
        </div>
      ),
    },
    [],
  );
  return null;
}

/**
 * Says why a run was refused (an answer from someone who may not give it, a thread still
 * busy) or failed (the agent down, a token it does not take). Either leaves the thread's
 * interrupt open on the server, so once that run is over the chat is opened again
 * (`onRefused`), which asks the server for the thread: the card comes back, answerable.
 * A connect that fails (the agent down when the page opens) is said too, but opens
 * nothing again: a reload asks once more.
 */
function RunErrors({ onRefused }: { onRefused: () => void }) {
  const { agent: shown } = useAgent({ agentId: AGENT_ID });
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let refused = false;
    const connecting = (running: unknown) => running instanceof ShopAgent && running.connecting;
    const subscription = shown.subscribe({
      onRunInitialized: ({ agent: running }) => {
        // A connect asks nothing of the agent: the refusal it follows still stands.
        if (connecting(running)) return;
        setError(null);
      },
      onRunErrorEvent: ({ event, agent: running }) => {
        refused = !connecting(running);
        setError(event.message);
      },
      onRunFailed: ({ error, agent: running }) => {
        // A chat closed mid-connect (React's second mount, a reopen) aborts its request.
        if (error.name === "AbortError") return;
        refused = !connecting(running);
        setError(`The agent could not be reached (${error.message}); try again.`);
      },
      onRunFinalized: () => {
        if (!refused) return;
        refused = false;
        onRefused();
      },
    });
    return () => subscription.unsubscribe();
  }, [shown, onRefused]);
  return error ? (
    <div className="run-error" role="alert">
      {error}
    </div>
  ) : null;
}

function App() {
  // Bumped to open the chat (and its interrupt) again from the server.
  const [opening, setOpening] = useState(0);
  const reopen = useCallback(() => setOpening((n) => n + 1), []);
  return (
    <CopilotKitProvider
      selfManagedAgents={{ [AGENT_ID]: agent }}
      agentId={AGENT_ID}
      headers={headers}
      showDevConsole={false}
    >
      <div className="page">
        <header className="top">
          <h1>Shop assistant</h1>
          <span className="thread" title="The AG-UI thread this conversation is">
            {threadId}
          </span>
          <button type="button" className="secondary" onClick={newThread}>
            New conversation
          </button>
        </header>
        <RunErrors onRefused={reopen} />
        <Approvals key={`approvals-${opening}`} />
        <Purchases />
        <main className="chat">
          <CopilotChat
            key={`chat-${opening}`}
            agentId={AGENT_ID}
            threadId={threadId}
            labels={{ chatInputPlaceholder: 'Try "buy a gpu"' }}
          />
        </main>
      </div>
    </CopilotKitProvider>
  );
}

const root = document.getElementById("root");
if (root) {
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
}
