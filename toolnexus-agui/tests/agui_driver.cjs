// Drives the endpoint with the official AG-UI client, @ag-ui/client's HttpAgent, as a
// front end would: one JSON step per line on stdin, one JSON result per line on stdout.
//
//   {"agent": NAME, "url": URL, "say": TEXT}         a user message, then a run
//   {"agent": NAME, "url": URL, "resume": [ENTRY]}   a run resuming the agent's interrupts;
//       ENTRY is {"interrupt": INDEX | "interruptId": ID, "status", "payload"?, "metadata"?}
//   {"agent": NAME, "url": URL, "capabilities": true} what the agent says it can do, read by
//       its getCapabilities() and checked against @ag-ui/core's AgentCapabilitiesSchema
//   {"agent": NAME, "url": URL, "connect": true}     the thread as it stands, by the client's
//       connectAgent() (a front end that reloads, or opens the thread on another device)
//   {"parallel": [STEP, …]}                           the steps at once; a list of results
//
// A step may also carry "headers" (sent with this and later runs of the agent, e.g.
// {"Authorization": "Bearer …"}) and, on the agent's first step, "threadId" (so two
// agents, two people, talk on one thread) and "state" (what its front end holds).
//
// Each agent (one thread) lives for the whole session, so a step may name a new URL: the
// same front end talking to a restarted server. A result holds the events the client's
// subscribers saw, its pending interrupts, messages and state after the run, the error the run
// threw (an HTTP error, a protocol violation), and every warning the client logged: it
// logs whatever it strips from what the server sent.
"use strict";

const readline = require("node:readline");
const { HttpAgent, runHttpRequest, transformHttpEventStream } = require("@ag-ui/client");
const { AgentCapabilitiesSchema } = require("@ag-ui/core/schemas");

// HttpAgent leaves getCapabilities() to the agent's own transport: this endpoint answers
// it at `capabilities` beside the run URL, with the agent's headers (its sign-in).
// Its connect() is the endpoint's `connect` beside the run URL, sent as a run is.
class DiscoveringAgent extends HttpAgent {
  beside(name) {
    return new URL(name, this.url.endsWith("/") ? this.url : `${this.url}/`).toString();
  }

  connect(input) {
    return transformHttpEventStream(
      runHttpRequest(() => this.fetch(this.beside("connect"), this.requestInit(input))),
    );
  }

  async getCapabilities() {
    const response = await fetch(this.beside("capabilities"), { headers: { ...this.headers, Accept: "application/json" } });
    if (!response.ok) {
      throw new Error(`HTTP ${response.status}: ${await response.text()}`);
    }
    return AgentCapabilitiesSchema.parse(await response.json());
  }
}

const warnings = [];
for (const level of ["warn", "error"]) {
  console[level] = (...args) => {
    warnings.push(args.map((a) => (typeof a === "string" ? a : String(a))).join(" "));
  };
}

const agents = new Map();

function agentFor(step) {
  let agent = agents.get(step.agent);
  if (!agent) {
    const config = { url: step.url };
    if (step.threadId !== undefined) config.threadId = step.threadId;
    if (step.headers !== undefined) config.headers = step.headers;
    if (step.state !== undefined) config.initialState = step.state;
    agent = new DiscoveringAgent(config);
    agents.set(step.agent, agent);
  }
  agent.url = step.url;
  if (step.headers !== undefined) agent.headers = step.headers;
  return agent;
}

async function capabilities(step) {
  const agent = agentFor(step);
  try {
    return { capabilities: await agent.getCapabilities(), error: null };
  } catch (e) {
    return { capabilities: null, error: e instanceof Error ? e.message : String(e) };
  }
}

async function run(step) {
  const agent = agentFor(step);
  const events = [];
  const subscriber = { onEvent: ({ event }) => void events.push(event) };
  const parameters = {};
  if (step.say !== undefined) {
    agent.addMessage({ id: `user-${agent.messages.length + 1}-${Date.now()}`, role: "user", content: step.say });
  }
  if (step.resume !== undefined) {
    parameters.resume = step.resume.map((entry) => {
      const interruptId =
        entry.interruptId ?? agent.pendingInterrupts[entry.interrupt]?.id ?? `missing-${entry.interrupt}`;
      const out = { interruptId, status: entry.status };
      if (entry.payload !== undefined) out.payload = entry.payload;
      if (entry.metadata !== undefined) out.metadata = entry.metadata;
      return out;
    });
  }
  let error = null;
  try {
    if (step.connect) {
      await agent.connectAgent(parameters, subscriber);
    } else {
      await agent.runAgent(parameters, subscriber);
    }
  } catch (e) {
    error = e instanceof Error ? e.message : String(e);
  }
  return {
    threadId: agent.threadId,
    events,
    interrupts: agent.pendingInterrupts,
    messages: agent.messages,
    state: agent.state,
    error,
  };
}

async function main() {
  const lines = readline.createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (!line.trim()) continue;
    const step = JSON.parse(line);
    warnings.length = 0;
    let result;
    if (step.parallel) {
      result = { results: await Promise.all(step.parallel.map(run)) };
    } else if (step.capabilities) {
      result = await capabilities(step);
    } else {
      result = await run(step);
    }
    result.warnings = [...warnings];
    process.stdout.write(JSON.stringify(result) + "\n");
  }
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e) + "\n");
  process.exit(1);
});
