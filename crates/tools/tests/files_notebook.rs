//! `NotebookEdit` on a checked-in notebook: each mode, cells named by id or index, and the
//! rest of the file written back byte for byte.

mod files_support;

use cairn_tools::ToolOutput;
use files_support::Project;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const FIXTURE: &str = include_str!("fixtures/files/analysis.ipynb");

/// The `plot` cell as Jupyter wrote it in the fixture.
const PLOT_CELL: &str = r#"  {
   "cell_type": "code",
   "execution_count": 2,
   "id": "plot",
   "metadata": {},
   "outputs": [
    {
     "data": {
      "text/plain": [
       "16"
      ]
     },
     "execution_count": 2,
     "metadata": {},
     "output_type": "execute_result"
    },
    {
     "data": {
      "image/png": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYPj/HwAEAQH/j3HW5AAAAABJRU5ErkJggg==",
      "text/plain": [
       "<Figure size 640x480 with 1 Axes>"
      ]
     },
     "metadata": {},
     "output_type": "display_data"
    }
   ],
   "source": [
    "total = sum(rows)\n",
    "plot(rows)\n",
    "total"
   ]
  },
"#;

/// The last cell, `oops`, with the comma of the cell before it.
const OOPS_CELL: &str = r#",
  {
   "cell_type": "code",
   "execution_count": 3,
   "id": "oops",
   "metadata": {},
   "outputs": [
    {
     "ename": "ZeroDivisionError",
     "evalue": "division by zero",
     "output_type": "error",
     "traceback": [
      "\u001b[0;31m---------------------------------------------------------------------------\u001b[0m",
      "\u001b[0;31mZeroDivisionError\u001b[0m: division by zero"
     ]
    }
   ],
   "source": [
    "total / 0"
   ]
  }
"#;

async fn opened() -> Project {
    let project = Project::new();
    project.put("analysis.ipynb", FIXTURE);
    project.read("analysis.ipynb").await;
    project
}

async fn notebook_edit(project: &Project, input: Value) -> ToolOutput {
    let mut input = input;
    input["notebook_path"] = json!(project.arg("analysis.ipynb"));
    project.call("NotebookEdit", input).await
}

fn cell_ids(text: &str) -> Vec<String> {
    // Anything but a notebook gives no ids, which fails the test's comparison.
    let notebook: Value = serde_json::from_str(text).unwrap_or_default();
    notebook["cells"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|cell| cell["id"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test]
async fn replacing_a_code_cell_clears_its_outputs_and_keeps_everything_else() {
    let project = opened().await;

    let output = notebook_edit(
        &project,
        json!({"cell_id": "plot", "new_source": "total = sum(rows)\ntotal * 2"}),
    )
    .await;

    let path = project.arg("analysis.ipynb");
    assert_eq!(
        output,
        ToolOutput::text(format!(
            "Replaced the source of code cell 2 (id \"plot\"). {path} now has 4 cells."
        ))
    );
    let new_cell = r#"  {
   "cell_type": "code",
   "execution_count": null,
   "id": "plot",
   "metadata": {},
   "outputs": [],
   "source": [
    "total = sum(rows)\n",
    "total * 2"
   ]
  },
"#;
    assert!(FIXTURE.contains(PLOT_CELL));
    assert_eq!(
        project.text("analysis.ipynb"),
        FIXTURE.replace(PLOT_CELL, new_cell)
    );
}

#[tokio::test]
async fn replacing_can_convert_a_cell_to_markdown() {
    let project = opened().await;

    let output = notebook_edit(
        &project,
        json!({"cell_id": "2", "new_source": "## Total", "cell_type": "markdown"}),
    )
    .await;

    assert!(!output.is_error, "{output:?}");
    let new_cell = "  {\n   \"cell_type\": \"markdown\",\n   \"id\": \"plot\",\n   \"metadata\": {},\n   \"source\": [\n    \"## Total\"\n   ]\n  },\n";
    assert_eq!(
        project.text("analysis.ipynb"),
        FIXTURE.replace(PLOT_CELL, new_cell)
    );
}

#[tokio::test]
async fn inserting_puts_a_new_cell_after_the_named_one() {
    let project = opened().await;

    let output = notebook_edit(
        &project,
        json!({"cell_id": "intro", "edit_mode": "insert", "cell_type": "markdown",
               "new_source": "Second paragraph.\nWith two lines."}),
    )
    .await;

    let text = project.text("analysis.ipynb");
    let ids = cell_ids(&text);
    let new_id = ids[1].clone();
    assert_eq!(ids, vec!["intro", new_id.as_str(), "load", "plot", "oops"]);
    assert_eq!(new_id.len(), 8, "{new_id}");
    assert!(new_id.chars().all(|c| c.is_ascii_hexdigit()), "{new_id}");
    let path = project.arg("analysis.ipynb");
    assert_eq!(
        output,
        ToolOutput::text(format!(
            "Inserted markdown cell 1 (id \"{new_id}\"). {path} now has 5 cells."
        ))
    );
    let intro_end = "    \"Numbers in €.\"\n   ]\n  },\n";
    let inserted = format!(
        "{intro_end}  {{\n   \"cell_type\": \"markdown\",\n   \"id\": \"{new_id}\",\n   \"metadata\": {{}},\n   \"source\": [\n    \"Second paragraph.\\n\",\n    \"With two lines.\"\n   ]\n  }},\n"
    );
    assert_eq!(text, FIXTURE.replacen(intro_end, &inserted, 1));
}

#[tokio::test]
async fn inserting_without_a_cell_puts_a_code_cell_first() {
    let project = opened().await;

    let output = notebook_edit(
        &project,
        json!({"edit_mode": "insert", "cell_type": "code", "new_source": "import math"}),
    )
    .await;

    assert!(!output.is_error, "{output:?}");
    let text = project.text("analysis.ipynb");
    let notebook: Value = serde_json::from_str(&text).unwrap();
    let first = &notebook["cells"][0];
    assert_eq!(
        first,
        &json!({"cell_type": "code", "execution_count": null, "id": first["id"], "metadata": {},
                "outputs": [], "source": ["import math"]})
    );
    assert_eq!(cell_ids(&text)[1..], ["intro", "load", "plot", "oops"]);
}

#[tokio::test]
async fn deleting_by_index_removes_only_that_cell() {
    let project = opened().await;

    let output = notebook_edit(
        &project,
        json!({"cell_id": "cell-3", "edit_mode": "delete"}),
    )
    .await;

    let path = project.arg("analysis.ipynb");
    assert_eq!(
        output,
        ToolOutput::text(format!(
            "Deleted code cell 3 (id \"oops\"); the cells after it moved up by one. {path} now \
             has 3 cells."
        ))
    );
    assert!(FIXTURE.contains(OOPS_CELL));
    assert_eq!(
        project.text("analysis.ipynb"),
        FIXTURE.replace(OOPS_CELL, "\n")
    );
}

#[tokio::test]
async fn a_notebook_not_read_or_changed_since_is_refused() {
    let project = Project::new();
    project.put("analysis.ipynb", FIXTURE);
    let path = project.arg("analysis.ipynb");

    let unread = notebook_edit(&project, json!({"cell_id": "plot", "new_source": "x"})).await;
    assert_eq!(
        unread,
        ToolOutput::error(format!(
            "{path} has not been read in this session. Read it first, then change it."
        ))
    );

    project.read("analysis.ipynb").await;
    project.put("analysis.ipynb", FIXTURE.replace("Sales", "Revenue"));
    let stale = notebook_edit(&project, json!({"cell_id": "plot", "new_source": "x"})).await;
    assert_eq!(
        stale,
        ToolOutput::error(format!(
            "{path} has changed on disk since it was last read (by the user, a formatter or \
             another tool). Read it again before changing it."
        ))
    );
    assert_eq!(
        project.text("analysis.ipynb"),
        FIXTURE.replace("Sales", "Revenue")
    );
}

#[tokio::test]
async fn unknown_cells_and_missing_arguments_are_explained() {
    let project = opened().await;

    let unknown = notebook_edit(&project, json!({"cell_id": "nope", "new_source": "x"})).await;
    assert_eq!(
        unknown,
        ToolOutput::error(
            "No cell has the id \"nope\". The notebook has 4 cells. Its cell ids are intro, \
             load, plot, oops; a 0-based index such as \"0\" also works."
        )
    );

    let no_type = notebook_edit(&project, json!({"edit_mode": "insert", "new_source": "x"})).await;
    assert_eq!(
        no_type,
        ToolOutput::error("cell_type is required to insert a cell: \"code\" or \"markdown\".")
    );

    let no_cell = notebook_edit(&project, json!({"edit_mode": "delete"})).await;
    assert_eq!(
        no_cell,
        ToolOutput::error(
            "cell_id is required to delete a cell: give the cell's id or 0-based index."
        )
    );
    assert_eq!(project.text("analysis.ipynb"), FIXTURE);
}
