// The real TypeScript Agent SDK (`@anthropic-ai/claude-agent-sdk`) driving cairn through
// `pathToClaudeCodeExecutable`: query() with canUseTool. Run by
// crates/cli/tests/sdk_interop.rs as `node query_can_use_tool.mjs CLI_PATH WORKDIR` with
// NODE_PATH naming the SDK's node_modules; prints what it saw as one JSON object.
import { createRequire } from "node:module";
import path from "node:path";

const [cli, work] = process.argv.slice(2);
const require = createRequire(path.join(process.env.NODE_PATH, "noop.js"));
const { query } = await import(require.resolve("@anthropic-ai/claude-agent-sdk"));

const asked = [];
const results = [];
async function* prompt() {
  yield { type: "user", message: { role: "user", content: "write the note" },
          parent_tool_use_id: null, session_id: "default" };
}
for await (const message of query({
  prompt: prompt(),
  options: {
    pathToClaudeCodeExecutable: cli,
    cwd: work,
    canUseTool: async (toolName, input) => {
      asked.push({ tool: toolName, content: input.content });
      return { behavior: "allow", updatedInput: { ...input, content: "from typescript\n" } };
    },
  },
})) {
  if (message.type === "result") {
    results.push({ subtype: message.subtype, is_error: message.is_error, result: message.result });
  }
}
console.log(JSON.stringify({ asked, results }));
