// The card a waiting purchase renders as in the chat: the question, what the call would
// do, and Approve, Decline and Edit. Its answer resumes the interrupted run; whether the
// answer counts (who may approve, whether the edited arguments fit the tool) is the
// endpoint's to decide, so the card only offers what the interrupt says is possible, and
// Edit unless the agent's capabilities say it takes no edited arguments.

import { useState, type FormEvent } from "react";
import type { Interrupt } from "@ag-ui/client";

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The string fields an edit may change: the tool's schema, as the interrupt offers it. */
interface EditableField {
  name: string;
  required: boolean;
  description?: string;
}

/**
 * The fields of `editedArgs` in the interrupt's response schema. The endpoint offers the
 * edit only to a person who may answer; to anyone else the schema has no `editedArgs`,
 * and the card shows no Edit.
 */
function editableFields(interrupt: Interrupt): EditableField[] {
  const properties = interrupt.responseSchema?.properties;
  const edited = isObject(properties) ? properties.editedArgs : undefined;
  if (!isObject(edited) || !isObject(edited.properties)) return [];
  const required = Array.isArray(edited.required) ? edited.required : [];
  return Object.entries(edited.properties)
    .filter(([, schema]) => isObject(schema) && schema.type === "string")
    .map(([name, schema]) => ({
      name,
      required: required.includes(name),
      description: isObject(schema) && typeof schema.description === "string" ? schema.description : undefined,
    }));
}

export interface ApprovalCardProps {
  interrupt: Interrupt;
  resolve: (payload: unknown, interruptId?: string) => Promise<unknown> | void;
  /** Whether the agent takes edited arguments (`humanInTheLoop.approveWithEdits`). */
  edits: boolean;
}

export function ApprovalCard({ interrupt, resolve, edits }: ApprovalCardProps) {
  const args = isObject(interrupt.metadata?.args) ? (interrupt.metadata.args as Json) : {};
  const tool = typeof interrupt.metadata?.tool === "string" ? interrupt.metadata.tool : null;
  const editable = editableFields(interrupt);
  const fields = edits ? editable : [];
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState<Record<string, string>>(() =>
    Object.fromEntries(editable.map((f) => [f.name, typeof args[f.name] === "string" ? (args[f.name] as string) : ""])),
  );
  // Once answered, the buttons stay disabled: one click is one resume.
  const [answered, setAnswered] = useState<string | null>(null);

  const answer = (what: string, payload: Json) => {
    if (answered) return;
    setAnswered(what);
    void Promise.resolve(resolve(payload, interrupt.id)).catch(() => {
      // The chat shows the run's error; the card comes back with the thread.
    });
  };

  const submitEdit = (event: FormEvent) => {
    event.preventDefault();
    const edited: Json = { ...args };
    for (const field of fields) {
      const value = draft[field.name]?.trim() ?? "";
      if (value) edited[field.name] = value;
      else delete edited[field.name];
    }
    answer("approved as edited", { approved: true, editedArgs: edited });
  };

  return (
    <section className="approval-card" aria-label="Approval" data-interrupt={interrupt.id}>
      <header>
        <span className="badge">Needs your approval</span>
        {tool && <code className="tool">{tool}</code>}
      </header>
      <p className="question">{interrupt.message ?? "Approve this step?"}</p>
      {Object.keys(args).length > 0 && !editing && (
        <dl className="args">
          {Object.entries(args).map(([name, value]) => (
            <div key={name}>
              <dt>{name}</dt>
              <dd className={`arg-${name}`}>{typeof value === "string" ? value : JSON.stringify(value)}</dd>
            </div>
          ))}
        </dl>
      )}
      {editing ? (
        <form className="edit" onSubmit={submitEdit}>
          {fields.map((field) => (
            <label key={field.name}>
              <span>{field.name}</span>
              <input
                name={field.name}
                value={draft[field.name] ?? ""}
                required={field.required}
                title={field.description}
                disabled={answered !== null}
                onChange={(e) => setDraft({ ...draft, [field.name]: e.target.value })}
              />
            </label>
          ))}
          <div className="actions">
            <button type="submit" className="approve" disabled={answered !== null}>
              Approve edited
            </button>
            <button type="button" className="secondary" disabled={answered !== null} onClick={() => setEditing(false)}>
              Back
            </button>
          </div>
        </form>
      ) : (
        <div className="actions">
          <button type="button" className="approve" disabled={answered !== null} onClick={() => answer("approved", { approved: true })}>
            Approve
          </button>
          <button
            type="button"
            className="decline"
            disabled={answered !== null}
            onClick={() => answer("declined", { approved: false, reason: "declined in the web app" })}
          >
            Decline
          </button>
          {fields.length > 0 && (
            <button type="button" className="edit" disabled={answered !== null} onClick={() => setEditing(true)}>
              Edit
            </button>
          )}
        </div>
      )}
      {answered && <p className="sent" role="status">Sent: {answered}…</p>}
    </section>
  );
}
