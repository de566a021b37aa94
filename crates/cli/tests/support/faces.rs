//! One scenario, every face: cairn's faces (`cairn -p`, and the interactive UI on a
//! pseudo-terminal) driven through one interface, so that a scenario written once runs
//! through each and shows whether they behave the same.
//!
//! A [`Face`] opens a [`Session`] in the harness's project; the session is told what the user
//! types, one [`Step`] at a time, and returns what the user saw of that turn. In `-p` a
//! session is a run of `cairn -p` per step, every run after the first continuing the session
//! with `-c`; in the interactive UI it is one cairn on a terminal, each step typed into its
//! input box and waited for on the screen, and closing it is `/exit`. What differs only in
//! how it is shown is said by the step ([`Step::shows_each`]); whatever else a scenario
//! asserts (what the model received, what is on disk) holds for both.

use std::process::Output;

use super::Harness;
use super::terminal::Terminal;

/// What the permission dialog asks with, on the interactive face.
const DIALOG_QUESTION: &str = "Do you want to proceed?";
/// What the interactive face shows while a turn runs.
const TURN_RUNNING: &str = "esc to interrupt";

/// Which face a scenario runs through: for what one face shows and the other cannot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaceKind {
    /// `cairn -p`: the prompt on the command line, the answer on stdout.
    Headless,
    /// The interactive UI on a terminal.
    Interactive,
}

/// A way of using cairn.
pub trait Face {
    fn kind(&self) -> FaceKind;

    /// Starts a session in `h`'s working directory: a new one, or continuing the last one
    /// there (`-c`).
    fn open<'h>(&self, h: &'h Harness, start: Start) -> Box<dyn Session + 'h>;
}

/// How a session starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    New,
    /// `-c`: the last session of the working directory, continued.
    Continue,
}

/// A session opened on a face.
pub trait Session {
    /// Sends what the user types and waits for the turn to end; panics (with what the face
    /// showed) if it does not show what the step says it shows: all of stdout in `-p`, a
    /// part of the screen below the typed line on the interactive face.
    fn say(&mut self, step: &Step) -> Turn;

    /// Ends the session as a user would, and checks that cairn exited successfully.
    fn close(self: Box<Self>);
}

/// What the user saw of one turn: stdout in `-p`, the screen from the typed line down on
/// the interactive face.
#[derive(Debug)]
pub struct Turn {
    pub shown: String,
}

/// One thing the user types, and what the turn it starts shows at its end.
#[derive(Debug, Clone)]
pub struct Step {
    line: String,
    shows: Shows,
    dialog: Dialog,
}

/// The text a turn ends by showing.
#[derive(Debug, Clone)]
enum Shows {
    /// The same on both faces (the model's final text, mostly).
    Same(String),
    /// Each face says it its own way.
    Each {
        headless: String,
        interactive: String,
    },
}

/// Whether the turn's tool call needs the user's approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialog {
    /// No call of the turn asks: a permission dialog is a failure.
    None,
    /// One call asks and is refused: "No" in the dialog where someone can be asked, and
    /// refused unasked in `-p`, where nobody can.
    Refuse,
}

impl Step {
    /// The user types `line`; the turn ends showing `text` on either face.
    pub fn new(line: &str, text: &str) -> Step {
        Step {
            line: line.to_string(),
            shows: Shows::Same(text.to_string()),
            dialog: Dialog::None,
        }
    }

    /// The user types `line`; the turn ends showing `headless` on stdout in `-p` and
    /// `interactive` on the screen: a difference of display only.
    pub fn shows_each(line: &str, headless: &str, interactive: &str) -> Step {
        Step {
            line: line.to_string(),
            shows: Shows::Each {
                headless: headless.to_string(),
                interactive: interactive.to_string(),
            },
            dialog: Dialog::None,
        }
    }

    /// One call of the turn needs approval, and the user (or, in `-p`, the lack of one)
    /// refuses it.
    pub fn refusing_the_question(mut self) -> Step {
        self.dialog = Dialog::Refuse;
        self
    }

    fn shows(&self, face: FaceKind) -> &str {
        match (&self.shows, face) {
            (Shows::Same(text), _) => text,
            (Shows::Each { headless, .. }, FaceKind::Headless) => headless,
            (Shows::Each { interactive, .. }, FaceKind::Interactive) => interactive,
        }
    }
}

/// `cairn -p`, one run per step.
pub struct Headless;

impl Face for Headless {
    fn kind(&self) -> FaceKind {
        FaceKind::Headless
    }

    fn open<'h>(&self, h: &'h Harness, start: Start) -> Box<dyn Session + 'h> {
        Box::new(HeadlessSession {
            h,
            continuing: start == Start::Continue,
        })
    }
}

struct HeadlessSession<'h> {
    h: &'h Harness,
    /// Whether the next run continues the session (`-c`): every run after the first does.
    continuing: bool,
}

impl Session for HeadlessSession<'_> {
    fn say(&mut self, step: &Step) -> Turn {
        let mut command = self.h.command();
        command.arg("-p");
        if self.continuing {
            command.arg("-c");
        }
        let output = command.arg(&step.line).output().unwrap();
        self.continuing = true;
        let shown = String::from_utf8(output.stdout.clone()).unwrap();
        let expected = step.shows(FaceKind::Headless);
        assert!(
            output.status.success() && shown == format!("{expected}\n"),
            "`cairn -p {:?}` was to show {expected:?}; {}",
            step.line,
            described(&output)
        );
        Turn { shown }
    }

    fn close(self: Box<Self>) {}
}

fn described(output: &Output) -> String {
    format!(
        "it exited with {}, stdout:\n{}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The interactive UI on a 100×30 terminal, in a folder trusted beforehand.
pub struct Interactive;

impl Face for Interactive {
    fn kind(&self) -> FaceKind {
        FaceKind::Interactive
    }

    fn open<'h>(&self, h: &'h Harness, start: Start) -> Box<dyn Session + 'h> {
        let args: &[&str] = match start {
            Start::New => &[],
            Start::Continue => &["-c"],
        };
        Box::new(InteractiveSession {
            term: Terminal::launch(h).args(args).start(),
        })
    }
}

struct InteractiveSession {
    term: Terminal,
}

impl InteractiveSession {
    /// Answers the permission dialog with "No" and no message, by the option's number.
    fn refuse_in_the_dialog(&self, line: &str) {
        let term = &self.term;
        // The dialog may take more than one frame to show its options.
        term.wait_until(&format!("a permission dialog after {line:?}"), |_| {
            let visible = term.visible();
            visible.contains(DIALOG_QUESTION) && the_no_option(&visible).is_some()
        });
        let number = the_no_option(&term.visible()).unwrap_or_else(|| {
            panic!("the dialog's \"No\" went away:\n{}", term.screen());
        });
        term.press(&number);
        term.wait_for("enter to send");
        term.press("Enter");
    }
}

/// The number of the dialog's "No" option (`4. No, and tell cairn what to do differently`).
fn the_no_option(visible: &str) -> Option<String> {
    visible.lines().find_map(|row| {
        let option = row.trim_start_matches(|c: char| !c.is_ascii_digit());
        let (number, label) = option.split_once(". ")?;
        label
            .starts_with("No, and tell")
            .then(|| number.to_string())
    })
}

impl Session for InteractiveSession {
    fn say(&mut self, step: &Step) -> Turn {
        let term = &self.term;
        term.send_line(&step.line);
        if step.dialog == Dialog::Refuse {
            self.refuse_in_the_dialog(&step.line);
        }
        let expected = step.shows(FaceKind::Interactive);
        // The turn has ended once what it shows is below the line as the transcript keeps
        // it, and nothing runs any more.
        let from_line = |screen: &str| screen.rfind(&step.line).map(|at| screen[at..].to_string());
        let screen = term.wait_until(
            &format!("{expected:?} after {:?}, the turn over", step.line),
            |screen| {
                let visible = term.visible();
                assert!(
                    step.dialog == Dialog::Refuse || !visible.contains(DIALOG_QUESTION),
                    "a permission dialog where none was expected:\n{visible}"
                );
                from_line(screen).is_some_and(|turn| turn.contains(expected))
                    && !visible.contains(TURN_RUNNING)
            },
        );
        Turn {
            shown: from_line(&screen).unwrap_or_default(),
        }
    }

    fn close(self: Box<Self>) {
        self.term.send_line("/exit");
        assert_eq!(self.term.wait_for_exit(), 0, "{}", self.term.screen());
    }
}
