//! [`Approvers`]: the scripted people of a test, and the record of what they were asked.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use crate::{Answer, Refusal, Request};

/// What a scripted person answers: approve, decline, approve with edited arguments, fill in
/// a form, or let the request expire.
///
/// Each becomes the [`Answer`] a real host would send for that choice, and the run judges
/// it as it would judge a person's: an edit on a request that is not a declared approval,
/// or form data that does not fit the form, is refused by the core, not by the kit.
///
/// ```
/// use toolnexus::serde_json::json;
/// use toolnexus::testing::Decision;
/// use toolnexus::{Refusal, Request};
///
/// let request = Request::new("approval", "Buy a gpu?").with_id("r1");
/// assert!(Decision::approve().answer(&request).ok);
/// assert_eq!(Decision::decline("too dear").answer(&request).note(), Some("too dear"));
/// assert_eq!(Decision::expire().answer(&request).refusal(), Some(&Refusal::Expired));
/// let edited = Decision::edit(json!({"item": "cpu"})).answer(&request);
/// assert_eq!(edited.args, Some(json!({"item": "cpu"})));
/// ```
///
/// [`by`](Self::by) says who gives it. The core's drives only record the name; a drive
/// through an inbox (`toolnexus_inbox::testing`) answers as that person, so the inbox's
/// rules judge them:
///
/// ```
/// use toolnexus::testing::Decision;
///
/// let two = Decision::approve().by("ada@shop.example").by("carol@shop.example");
/// assert_eq!(two.people(), ["ada@shop.example", "carol@shop.example"]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    choice: Choice,
    by: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
enum Choice {
    Approve,
    Decline(String),
    Edit(Value),
    Fill(Value),
    Expire,
    Answer(Answer),
}

impl Decision {
    fn of(choice: Choice) -> Self {
        Decision {
            choice,
            by: Vec::new(),
        }
    }

    /// Given by `person` (an id, such as an email address); each call adds one more
    /// person, and each of them gives the decision in turn: a quorum of two is
    /// `.by(ada).by(carol)`. A decision nobody is named for is given by the approvers'
    /// [`as_person`](Approvers::as_person), if they have one.
    pub fn by(mut self, person: impl Into<String>) -> Self {
        self.by.push(person.into());
        self
    }

    /// The people who give it, in order ([`by`](Self::by)).
    pub fn people(&self) -> &[String] {
        &self.by
    }

    /// Whether it lets the request pass its deadline rather than answering it.
    pub fn is_expiry(&self) -> bool {
        self.choice == Choice::Expire
    }

    /// Says yes.
    pub fn approve() -> Self {
        Decision::of(Choice::Approve)
    }

    /// Says no, with the person's words (the model reads them after the refusal).
    pub fn decline(note: impl Into<String>) -> Self {
        Decision::of(Choice::Decline(note.into()))
    }

    /// Approves a declared approval with these arguments instead of the model's
    /// ([`Answer::with_args`]).
    pub fn edit(args: Value) -> Self {
        Decision::of(Choice::Edit(args))
    }

    /// Fills in the form the request asks for with `data` ([`Answer::with_data`]).
    pub fn fill(data: Value) -> Self {
        Decision::of(Choice::Fill(data))
    }

    /// Lets the request pass its deadline unanswered: the refusal a host sends when it
    /// expires ([`Refusal::Expired`], as the inbox's `expire_due` writes it).
    pub fn expire() -> Self {
        Decision::of(Choice::Expire)
    }

    /// Answers with `answer` as given, its id replaced by the request's (for answers the
    /// other choices do not make, such as [`Answer::remember`] or a cancel).
    pub fn answer_with(answer: Answer) -> Self {
        Decision::of(Choice::Answer(answer))
    }

    /// The answer this decision gives `request`.
    pub fn answer(&self, request: &Request) -> Answer {
        let id = request.id.as_str();
        match &self.choice {
            Choice::Approve => Answer::ok(id),
            Choice::Decline(note) => Answer::refuse(id, Refusal::Declined).with_note(note),
            Choice::Edit(args) => Answer::ok(id).with_args(args.clone()),
            Choice::Fill(data) => Answer::ok(id).with_data(data.clone()),
            Choice::Expire => Answer::refuse(id, Refusal::Expired),
            Choice::Answer(answer) => Answer {
                id: id.to_owned(),
                ..answer.clone()
            },
        }
    }
}

/// A question as the approvers see it before they answer: the request and, when the kit
/// can tell, the tool call that asked it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Ask<'a> {
    /// The request.
    pub request: &'a Request,
    /// The tool that asked: for a request a sub-agent relayed, the tool of the agent's run
    /// that asked it; a declared approval names it; otherwise the call the halted turn
    /// shows (durable drives), or the turn's only call (inline drives). `None` when the
    /// kit cannot tell.
    pub tool: Option<&'a str>,
    /// The arguments of that call, when the tool is known.
    pub args: Option<&'a Value>,
}

impl<'a> Ask<'a> {
    /// A question as a drive shows it to [`Approvers::decide`]: for a drive of another
    /// crate (the inbox's), which finds the call that asked in its own records.
    pub fn new(request: &'a Request, tool: Option<&'a str>, args: Option<&'a Value>) -> Self {
        Ask {
            request,
            tool,
            args,
        }
    }
}

/// One question a run asked and what the approvers answered, in the order asked.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Question {
    /// The request.
    pub request: Request,
    /// The tool that asked, when known (see [`Ask::tool`]).
    pub tool: Option<String>,
    /// The arguments of that call, when known.
    pub args: Option<Value>,
    /// The answer given.
    pub answer: Answer,
    /// Who may answer it, as the rule that judged the answers names them (`group:finance`,
    /// `ada@shop.example`): the request's own responders in the core's drives, the
    /// inbox's rule in a drive through an inbox. Empty when anyone may.
    pub asked: Vec<String>,
    /// Who answered, in order, as it was recorded: the people the decision names, and
    /// through an inbox as the inbox recorded them (`bob@shop.example for
    /// ada@shop.example` for a delegate). Empty when nobody was named.
    pub answered_by: Vec<String>,
}

impl Question {
    /// A question asked and answered, with nobody named as asked or answering: for a drive
    /// of another crate, which records it with [`Approvers::record`] once it knows who.
    pub fn new(
        request: Request,
        tool: Option<String>,
        args: Option<Value>,
        answer: Answer,
    ) -> Self {
        Question {
            request,
            tool,
            args,
            answer,
            asked: Vec::new(),
            answered_by: Vec::new(),
        }
    }
}

impl fmt::Display for Question {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ", self.request.kind.as_str())?;
        if let Some(tool) = &self.tool {
            write!(f, "by {tool} ")?;
        }
        write!(f, "{:?} ", self.request.prompt)?;
        if !self.asked.is_empty() {
            write!(f, "(asked {}) ", self.asked.join(", "))?;
        }
        write!(f, "-> {}", Verdict(&self.answer))?;
        if !self.answered_by.is_empty() {
            write!(f, " by {}", self.answered_by.join(", "))?;
        }
        Ok(())
    }
}

/// An answer in a few words, for failure messages and golden files.
pub(super) struct Verdict<'a>(pub(super) &'a Answer);

impl fmt::Display for Verdict<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let answer = self.0;
        match answer.refusal() {
            None => f.write_str("approved")?,
            Some(refusal) => write!(f, "{}", refusal.as_str())?,
        }
        if let Some(args) = &answer.args {
            write!(f, " with args {args}")?;
        }
        if let Some(data) = &answer.data {
            write!(f, " with data {data}")?;
        }
        if let Some(note) = answer.note() {
            write!(f, " ({note})")?;
        }
        if answer.remember {
            f.write_str(", remembered")?;
        }
        Ok(())
    }
}

type Chooser = dyn Fn(&Ask<'_>) -> Option<Decision> + Send + Sync;

/// One rule: the questions it recognises, and what it answers them.
enum Rule {
    Tool(String, Decision),
    Prompt(String, Decision),
    Choose(Box<Chooser>),
}

struct Script {
    rules: Vec<Rule>,
    otherwise: Option<Decision>,
    person: Option<String>,
}

/// The scripted people of a test: rules that answer each question a run asks — chosen by
/// the tool that asks, by a pattern of its prompt, or by a closure — and a record of every
/// question, to assert on.
///
/// Rules are tried in the order they were added; the first that recognises a question
/// answers it. A question no rule answers fails the test, naming it. Clones share their
/// rules and their record.
///
/// ```
/// use toolnexus::serde_json::json;
/// use toolnexus::testing::{Approvers, Decision};
/// use toolnexus::Request;
///
/// let people = Approvers::new()
///     .tool("delete_file", Decision::decline("keep it"))
///     .prompt("Approve purchase of *?", Decision::approve())
///     .when(|ask| (ask.request.kind == "input").then(|| Decision::fill(json!({"zip": "75001"}))));
///
/// let buy = Request::new("approval", "Approve purchase of gpu?").with_id("r1");
/// assert!(people.answer(&buy, None, None).ok);
/// people.asked_exactly(["Approve purchase of gpu?"]);
/// ```
#[derive(Clone)]
pub struct Approvers {
    script: Arc<Script>,
    asked: Arc<Mutex<Vec<Question>>>,
    drives: Arc<AtomicUsize>,
}

impl Default for Approvers {
    fn default() -> Self {
        Approvers::new()
    }
}

impl fmt::Debug for Approvers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Approvers")
            .field("rules", &self.script.rules.len())
            .field("asked", &self.questions().len())
            .finish_non_exhaustive()
    }
}

impl Approvers {
    /// Approvers with no rule yet: every question fails the test until one is added.
    pub fn new() -> Self {
        Approvers {
            script: Arc::new(Script {
                rules: Vec::new(),
                otherwise: None,
                person: None,
            }),
            asked: Arc::default(),
            drives: Arc::default(),
        }
    }

    /// The id of the next run these approvers drive: `run-1`, `run-2`, … What every drive
    /// names a run it is not given an id for, a drive of another crate included.
    pub fn next_run_id(&self) -> String {
        format!("run-{}", self.drives.fetch_add(1, Ordering::Relaxed) + 1)
    }

    fn rule(self, rule: Rule) -> Self {
        self.edit_script(|script| script.rules.push(rule))
    }

    fn edit_script(mut self, edit: impl FnOnce(&mut Script)) -> Self {
        match Arc::get_mut(&mut self.script) {
            Some(script) => edit(script),
            None => panic!(
                "Approvers: add every rule before the approvers are cloned or handed to a run"
            ),
        }
        self
    }

    /// Answers the questions of tool `name` with `decision`.
    pub fn tool(self, name: impl Into<String>, decision: Decision) -> Self {
        self.rule(Rule::Tool(name.into(), decision))
    }

    /// Answers the questions whose prompt matches `pattern` with `decision`: the prompt
    /// whole, where `*` stands for any text (`"Approve purchase of *?"`).
    pub fn prompt(self, pattern: impl Into<String>, decision: Decision) -> Self {
        self.rule(Rule::Prompt(pattern.into(), decision))
    }

    /// Lets `choose` answer: its decision answers the question; `None` leaves it to the
    /// rules after it.
    pub fn when(
        self,
        choose: impl Fn(&Ask<'_>) -> Option<Decision> + Send + Sync + 'static,
    ) -> Self {
        self.rule(Rule::Choose(Box::new(choose)))
    }

    /// Gives every decision that names nobody ([`Decision::by`]) as `person`: the one
    /// person a test's approvers stand for.
    ///
    /// ```
    /// use toolnexus::testing::{Approvers, Decision};
    /// use toolnexus::Request;
    ///
    /// let ada = Approvers::as_person("ada@shop.example").otherwise(Decision::approve());
    /// ada.answer(&Request::new("approval", "Pay $40?").with_id("r1"), None, None);
    /// assert_eq!(ada.questions()[0].answered_by, ["ada@shop.example"]);
    /// ```
    pub fn as_person(person: impl Into<String>) -> Self {
        let person = person.into();
        Approvers::new().edit_script(|script| script.person = Some(person))
    }

    /// Answers with `decision` whatever no rule answered.
    pub fn otherwise(self, decision: Decision) -> Self {
        self.edit_script(|script| script.otherwise = Some(decision))
    }

    /// Answers a question, records it, and returns the answer. The drives call this for
    /// each question a run asks; `tool` and `args` are the call that asked, when known.
    ///
    /// # Panics
    ///
    /// When no rule answers the question: the message names it and says what to add.
    pub fn answer(&self, request: &Request, tool: Option<&str>, args: Option<&Value>) -> Answer {
        let decision = self.decide(&Ask::new(request, tool, args));
        let answer = decision.answer(request);
        let mut question = Question::new(
            request.clone(),
            tool.map(str::to_owned),
            args.cloned(),
            answer.clone(),
        );
        question.asked = request
            .responders()
            .unwrap_or_default()
            .into_iter()
            .map(str::to_owned)
            .collect();
        question.answered_by = decision.by;
        self.record(question);
        answer
    }

    /// What the approvers decide for `ask`, without recording it: the first rule that
    /// answers it, else [`otherwise`](Self::otherwise), given by the people it names or by
    /// the approvers' [`as_person`](Self::as_person). For a drive of another crate, which
    /// gives the answer its own way and then [`record`](Self::record)s the question.
    ///
    /// # Panics
    ///
    /// When no rule answers the question: the message names it and says what to add.
    pub fn decide(&self, ask: &Ask<'_>) -> Decision {
        let (request, tool) = (ask.request, ask.tool);
        let mut decision = self.choose(ask).unwrap_or_else(|| {
            let by = match tool {
                Some(tool) => format!("tool `{tool}`"),
                None => "a tool the kit cannot tell (a hand-written request in a turn of \
                         several calls, driven inline: match it by prompt, or drive it \
                         durably)"
                    .to_owned(),
            };
            panic!(
                "no approver answers the {} request {:?}, asked by {by}: add a rule for it \
                 (Approvers::tool, ::prompt, ::when) or Approvers::otherwise\n{}",
                request.kind.as_str(),
                request.prompt,
                Listed("asked before it", &self.questions()),
            )
        });
        if decision.by.is_empty() {
            decision.by.extend(self.script.person.clone());
        }
        decision
    }

    /// Adds `question` to the record, as asked now.
    pub fn record(&self, question: Question) {
        self.lock().push(question);
    }

    fn choose(&self, ask: &Ask<'_>) -> Option<Decision> {
        let chosen = self.script.rules.iter().find_map(|rule| match rule {
            Rule::Tool(name, decision) => (ask.tool == Some(name)).then(|| decision.clone()),
            Rule::Prompt(pattern, decision) => {
                wildcard(pattern, &ask.request.prompt).then(|| decision.clone())
            }
            Rule::Choose(choose) => choose(ask),
        });
        chosen.or_else(|| self.script.otherwise.clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Question>> {
        // A panicking assertion elsewhere must not hide the record from the next one.
        self.asked.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Every question asked so far, in order, with its answer.
    pub fn questions(&self) -> Vec<Question> {
        self.lock().clone()
    }

    /// The prompts asked so far, in order.
    pub fn prompts(&self) -> Vec<String> {
        self.lock()
            .iter()
            .map(|q| q.request.prompt.clone())
            .collect()
    }

    /// Asserts that exactly these prompts were asked, in this order.
    ///
    /// # Panics
    ///
    /// Otherwise, listing what was expected and what was asked (with each answer).
    ///
    /// ```should_panic
    /// use toolnexus::testing::{Approvers, Decision};
    /// use toolnexus::Request;
    ///
    /// let people = Approvers::new().otherwise(Decision::approve());
    /// people.answer(&Request::new("approval", "Pay $40?").with_id("r1"), None, None);
    /// people.asked_exactly(["Pay $40?", "Pay $60?"]); // panics: only one was asked
    /// ```
    pub fn asked_exactly<I>(&self, prompts: I)
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        let expected: Vec<String> = prompts.into_iter().map(|p| p.as_ref().to_owned()).collect();
        let asked = self.questions();
        let same = asked.len() == expected.len()
            && asked
                .iter()
                .zip(&expected)
                .all(|(q, e)| q.request.prompt == *e);
        if !same {
            let mut wanted = String::new();
            for (i, prompt) in expected.iter().enumerate() {
                wanted.push_str(&format!("\n  {}. {prompt:?}", i + 1));
            }
            if expected.is_empty() {
                wanted.push_str("\n  (nothing)");
            }
            panic!(
                "the run asked other questions than expected\nexpected {} question(s):{wanted}\n{}",
                expected.len(),
                Listed("asked", &asked),
            );
        }
    }

    /// Asserts that no question was asked.
    ///
    /// # Panics
    ///
    /// Otherwise, listing what was asked.
    pub fn asked_nothing(&self) {
        self.asked_exactly(std::iter::empty::<&str>());
    }
}

/// Questions as a numbered list under a heading.
struct Listed<'a>(&'static str, &'a [Question]);

impl fmt::Display for Listed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Listed(heading, questions) = *self;
        write!(f, "{heading} {} question(s):", questions.len())?;
        if questions.is_empty() {
            f.write_str("\n  (nothing)")?;
        }
        for (i, question) in questions.iter().enumerate() {
            write!(f, "\n  {}. {question}", i + 1)?;
        }
        Ok(())
    }
}

/// Whether `text` is `pattern` whole, each `*` of the pattern standing for any text.
fn wildcard(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        // No `*`: the prompt must be the pattern itself.
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::wildcard;

    #[test]
    fn a_pattern_matches_the_whole_prompt_with_stars_for_any_text() {
        assert!(wildcard(
            "Approve purchase of *?",
            "Approve purchase of gpu?"
        ));
        assert!(wildcard("*gpu*", "Approve purchase of gpu?"));
        assert!(wildcard("a*b*c", "abc"));
        assert!(wildcard("exact", "exact"));
        assert!(!wildcard("exact", "exactly"));
        assert!(!wildcard("Approve *?", "Approve gpu"));
        assert!(wildcard("a*bc", "abc"));
        assert!(!wildcard("ab*ba", "aba"), "the two ends must not overlap");
    }
}
